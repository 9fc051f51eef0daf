# Sourced by the scripts: picks the worker's Python. KVAULT_PYTHON wins; else
# .venv/bin/python (made by setup.sh) if it imports torch and triton; else
# `python3` if it imports torch; else Debian's /usr/bin/python3 (python3-torch).
_kvault_venv="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.venv/bin/python"
if [ -z "${KVAULT_PYTHON:-}" ]; then
  if "$_kvault_venv" -c "import torch, triton" >/dev/null 2>&1; then
    export KVAULT_PYTHON="$_kvault_venv"  # setup.sh's venv: Debian's torch + triton
  elif python3 -c "import torch" >/dev/null 2>&1; then
    export KVAULT_PYTHON=python3
  elif /usr/bin/python3 -c "import torch" >/dev/null 2>&1; then
    export KVAULT_PYTHON=/usr/bin/python3
  fi
fi
unset _kvault_venv
