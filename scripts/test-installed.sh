#!/usr/bin/env bash
# The Python package as users install it (docs/install.md): a wheel of python/ built
# and installed into a fresh venv, build/wheel-venv, then the trainer adapters' and
# the client's tests and tests/test_cluster_start.py (a one-node campaign among them)
# run from outside python/, so the installed copy is the one imported. The venv sees
# the packages of the worker's Python (torch; ray from scripts/setup.sh's .venv), so
# nothing but pip's build backend is downloaded. Called by scripts/test.sh.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/scripts/env.sh"
base=${KVAULT_PYTHON:-python3}
venv=$root/build/wheel-venv
rm -rf "$venv" "$root/build/wheel-src" "$root/build/wheel"
# Built from a copy: a build in python/ leaves python/build/lib, whose stale files a
# later wheel would ship.
mkdir -p "$root/build/wheel-src"
cp -r "$root/python/pyproject.toml" "$root/python/kernelvault" "$root/build/wheel-src/"
"$base" -m venv --system-site-packages "$venv"
"$venv/bin/pip" wheel -q --no-deps -w "$root/build/wheel" "$root/build/wheel-src"
# A venv made from a venv sees the system's packages, not its maker's: a .pth adds them.
"$base" -c 'import site; print("\n".join(site.getsitepackages()))' \
  >"$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/kvault-base.pth"
wheel=$(ls "$root"/build/wheel/kernelvault-*.whl)
extra=""
if "$venv/bin/python" -c "import ray" 2>/dev/null; then extra="[cluster]"; fi
"$venv/bin/pip" install -q --no-index "$wheel$extra"
cd "$venv"
"$venv/bin/python" - <<'EOF'
import sys
import kernelvault
import kernelvault.cluster
assert kernelvault.__file__.startswith(sys.prefix + "/"), "not the installed copy: " + kernelvault.__file__
print("installed: kernelvault %s at %s" % (kernelvault.__version__, kernelvault.__file__))
EOF
# --noconftest: python/tests/conftest.py puts python/ on sys.path (for kvault_worker).
KVAULT_BIN=$root/build/kvault "$venv/bin/python" -m pytest -q -rs --noconftest \
  "$root/python/tests/test_kernelvault_adapters.py" "$root/python/tests/test_kernelvault_client.py" \
  "$root/python/tests/test_cluster_start.py"
