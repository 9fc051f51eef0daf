"""KernelVault worker: runs tasks and candidates for the C++ engine.

Started as `python -m kvault_worker`; speaks the line-JSON protocol of
docs/worker-protocol.md over the fds named in KVAULT_WORKER_FDS.
"""

PROTOCOL_VERSION = 9
