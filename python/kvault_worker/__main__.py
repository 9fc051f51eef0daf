"""Entry point: `python -m kvault_worker` (docs/worker-protocol.md).

Exits with os._exit so that threads or atexit hooks left behind by task or
candidate code cannot keep the process alive after `shutdown` or end of input.
"""
import os

from kvault_worker.protocol import flush_stdio, main

if __name__ == "__main__":
    code = main()
    flush_stdio()
    os._exit(code)
