"""The errors of the KernelVault client.

A kernel's failure (it did not compile, it gave wrong answers, it was slow) is not an
error: it is a result with a reward. These exceptions are for everything else, and
none of them may ever be turned into a reward of 0 (docs/reward.md, "Infrastructure
failures: null, never 0"):

    KernelVaultError           base class
    +-- RequestError           the server refused the request (4xx): fix the caller
    |   +-- BatchNotFoundError the batch id is unknown (404), e.g. after a restart
    |   +-- UnsupportedError   the server cannot run it (422 "unsupported"): its backend
    |                          cannot build or run the candidate's language
    +-- TaskError              the task (the reference) is at fault, not the candidate
    +-- InfrastructureError    the service could not judge the candidate; retried
    |   +-- DeadlineError      the request's deadline passed before it was verified
    +-- BatchCancelledError    the batch was cancelled before this candidate ran

Every exception carries what the server said: `status` (the HTTP code, or None for a
connection failure), `kind` (the server's `error.kind`), `server_message` (its
`error.message` alone, where `message` also says which call it answered) and, where
there was one, `result` (the result object of the candidate).
"""


class KernelVaultError(Exception):
    """Base class of every error this package raises."""

    def __init__(self, message, *, status=None, kind=None, result=None, server_message=None):
        super().__init__(message)
        self.message = message
        self.status = status
        self.kind = kind
        self.result = result
        self.server_message = server_message or message


class RequestError(KernelVaultError):
    """The server answered 4xx: malformed request, missing token, body too large,
    unknown path. Retrying the same request cannot help."""


class BatchNotFoundError(RequestError):
    """GET/DELETE of a batch the server does not know (404). After a server restart
    every batch id is unknown; `Client.verify_batch` resubmits by itself."""


class UnsupportedError(RequestError):
    """The server cannot judge this request at all (HTTP 422, kind `unsupported`):
    its backend cannot build or run the candidate's language (a HIP or CUDA answer sent
    to a server on the CPU backend). Nothing of the request was queued. Not a reward of
    0: the trainer or the server is misconfigured, and every retry ends the same way."""


class TaskError(KernelVaultError):
    """The task could not be run (HTTP 422, status `task_error`): its reference is
    broken or its inputs cannot be built. Says nothing about the candidate."""


class InfrastructureError(KernelVaultError):
    """The service could not judge the candidate: connection refused or reset, 503,
    429, other 5xx, or a result with `error.kind = "infrastructure"`, after the
    client's retries ran out."""


class DeadlineError(InfrastructureError):
    """The request's `deadline_s` passed before the candidate was verified (504, or
    a result with `error.kind = "deadline"`)."""


class BatchCancelledError(KernelVaultError):
    """A candidate of a cancelled batch that never ran (`error.kind = "cancelled"`)."""
