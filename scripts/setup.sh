#!/usr/bin/env bash
# Installs what KernelVault needs on Debian 12 (apt-get) and builds it into build/.
# Safe to run again: installs only what is missing, rebuilds incrementally.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

packages=(
  cmake ninja-build g++ pkg-config
  libsqlite3-dev nlohmann-json3-dev libcli11-dev libgtest-dev libcurl4-openssl-dev libcpp-httplib-dev
  python3 python3-dev python3-venv python3-torch libtorch-dev pybind11-dev python3-numpy python3-pytest
  hipcc
  clang libclang-rt-14-dev
  chromium
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Triton for Triton candidates (docs/candidate-formats.md): a venv that sees Debian's
# torch, with a pinned triton whose interpreter runs kernels on the CPU.
triton_version=3.1.0
if ! "$root/.venv/bin/python" -c "import torch, triton" >/dev/null 2>&1; then
  echo "setup: installing triton==$triton_version into $root/.venv"
  [ -x "$root/.venv/bin/python" ] || /usr/bin/python3 -m venv --system-site-packages "$root/.venv"
  "$root/.venv/bin/pip" install -q "triton==$triton_version"
fi
# Exports (Parquet, Hugging Face datasets), the corpus's near-duplicate baseline and the
# Ray cluster: pinned in scripts/python-requirements.txt.
if ! "$root/.venv/bin/python" -c "import pyarrow, datasets, datasketch, ray" >/dev/null 2>&1; then
  echo "setup: installing scripts/python-requirements.txt into $root/.venv"
  "$root/.venv/bin/pip" install -q -r "$root/scripts/python-requirements.txt"
fi

cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$root/build" -j "$(nproc)"
echo "setup: built $root/build/kvault"
