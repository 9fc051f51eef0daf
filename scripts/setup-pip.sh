#!/usr/bin/env bash
# KernelVault without Debian's packages for Python: a virtual environment with PyPI's
# torch 2.x, kvault built against it (CMake preset `pip`), then a short check.
#
#   scripts/setup-pip.sh [VENV]     VENV defaults to venv-pip beside the repository
#
# Needs: a Python >= 3.10 with venv ($PYTHON, default python3), a C++20 compiler, and the
# C++ libraries the build finds (SQLite, libcurl, nlohmann_json, CLI11, cpp-httplib: CMake
# names the package to install for any that is missing). CMake and Ninja come from PyPI
# when the machine has none recent enough. PyPI's torch is the CUDA build (several GB);
# it runs candidates on the CPU as well. Safe to run again: installs only what is missing.
# KVAULT_BUILD_LOCK=FILE builds under `flock FILE` (a machine shared by several builds).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${1:-$(dirname "$root")/venv-pip}
python=${PYTHON:-python3}
torch_spec="torch>=2,<3"
build_dir="$root/build-pip"
start=$SECONDS

say() { echo "setup-pip [$((SECONDS - start))s]: $*"; }
die() { echo "setup-pip: $*" >&2; exit 1; }

make_venv() {
  "$python" -c 'import sys; sys.exit(sys.version_info < (3, 10))' ||
    die "$python is older than Python 3.10 (set PYTHON=...)"
  [ -x "$venv/bin/python" ] || { say "creating $venv"; "$python" -m venv "$venv"; }
  "$venv/bin/python" -m pip install -q --upgrade pip
}

install_python_packages() {
  if ! "$venv/bin/python" -c 'import torch, sys; sys.exit(int(torch.__version__.split(".")[0]) != 2)' \
       2>/dev/null; then
    say "installing $torch_spec from PyPI (large: the CUDA build)"
    "$venv/bin/python" -m pip install -q "$torch_spec"
  fi
  # scripts/python-requirements.txt without its numpy pin, which holds numpy 1.x for
  # Debian's torch 1.13; pip picks a numpy that torch 2.x and the pins agree on.
  say "installing pytest and scripts/python-requirements.txt (numpy left to pip)"
  grep -v '^numpy==' "$root/scripts/python-requirements.txt" > "$venv/kvault-requirements.txt"
  "$venv/bin/python" -m pip install -q pytest numpy -r "$venv/kvault-requirements.txt"
}

# CMake >= 3.20 and Ninja, from PyPI into the venv when the machine lacks them.
install_build_tools() {
  local need=() have
  have=$(cmake --version 2>/dev/null | awk 'NR == 1 {print $3}')
  [ -n "$have" ] && [ "$(printf '3.20\n%s\n' "$have" | sort -V | head -1)" = 3.20 ] || need+=(cmake)
  command -v ninja >/dev/null || need+=(ninja)
  if ((${#need[@]})); then
    say "installing ${need[*]} from PyPI"
    "$venv/bin/python" -m pip install -q "${need[@]}"
    export PATH="$venv/bin:$PATH"
  fi
}

build() {
  say "configuring $build_dir (preset pip, KVAULT_PYTHON=$venv/bin/python)"
  KVAULT_PYTHON="$venv/bin/python" cmake --preset pip -S "$root" -B "$build_dir" >/dev/null
  say "building kvault"
  local lock=()
  [ -n "${KVAULT_BUILD_LOCK:-}" ] && lock=(flock "$KVAULT_BUILD_LOCK")
  "${lock[@]}" cmake --build "$build_dir" --target kvault
}

# doctor, one correct and one wrong extension candidate on the CPU, the worker's tests.
check() {
  export KVAULT_PYTHON="$venv/bin/python"
  export KVAULT_CACHE_DIR="$build_dir/cache"
  local kvault="$build_dir/kvault" db="$build_dir/check.db"
  say "kvault doctor"
  "$kvault" doctor
  say "kvault verify: examples/cpu/relu.cpp (correct; the first build precompiles PyTorch's headers)"
  "$kvault" verify --task "$root/examples/suite/relu.py" --candidate "$root/examples/cpu/relu.cpp" \
    --backend cpu --db "$db" --fail-on-reject
  say "kvault verify: examples/cpu/relu.wrong-abs.cpp (must be rejected)"
  if "$kvault" verify --task "$root/examples/suite/relu.py" \
       --candidate "$root/examples/cpu/relu.wrong-abs.cpp" --backend cpu --db "$db" --fail-on-reject; then
    die "relu.wrong-abs.cpp was accepted"
  fi
  say "worker tests (pytest) under torch $("$KVAULT_PYTHON" -c 'import torch; print(torch.__version__)')"
  (cd "$root" && "$KVAULT_PYTHON" -m pytest -q python/tests/test_extension.py \
     python/tests/test_protocol.py python/tests/test_run.py python/tests/test_tensorfile.py)
}

make_venv
install_python_packages
install_build_tools
build
check
say "done. Use it with: export KVAULT_PYTHON=$venv/bin/python; $build_dir/kvault ..."
