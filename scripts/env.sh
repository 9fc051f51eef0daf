# Sourced by the scripts: picks the worker's Python. KVAULT_PYTHON wins; else
# `python3` if it imports torch; else Debian's /usr/bin/python3 (python3-torch).
if [ -z "${KVAULT_PYTHON:-}" ]; then
  if python3 -c "import torch" >/dev/null 2>&1; then
    export KVAULT_PYTHON=python3
  elif /usr/bin/python3 -c "import torch" >/dev/null 2>&1; then
    export KVAULT_PYTHON=/usr/bin/python3
  fi
fi
