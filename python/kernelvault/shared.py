"""The clients the trainer adapters share: one per (url, token) and kind, per process."""
import os
import threading

from .async_client import AsyncClient
from .client import DEFAULT_URL, Client

_shared = {}
_shared_lock = threading.Lock()


def _key(url, token, asynchronous):
    url = (url or os.environ.get("KVAULT_URL") or DEFAULT_URL).rstrip("/")
    token = token if token is not None else os.environ.get("KVAULT_TOKEN") or None
    return url, token, bool(asynchronous)


def shared_client(url=None, token=None, asynchronous=False):
    """The process's Client (or AsyncClient) for (url, token), made on first use:
    what the trainer adapters call once per sample. Made with $KVAULT_TIMEOUT_S and
    $KVAULT_RETRIES when set, else the defaults; set_shared_client installs another."""
    key = _key(url, token, asynchronous)
    with _shared_lock:
        client = _shared.get(key)
        if client is None:
            options = {}
            if os.environ.get("KVAULT_TIMEOUT_S"):
                options["timeout_s"] = float(os.environ["KVAULT_TIMEOUT_S"])
            if os.environ.get("KVAULT_RETRIES"):
                options["retries"] = int(os.environ["KVAULT_RETRIES"])
            client = _shared[key] = (AsyncClient if asynchronous else Client)(key[0], key[1], **options)
        return client


def set_shared_client(client):
    """Makes `client` (a Client or an AsyncClient) the one shared_client returns for
    its url and token: how a launcher gives the adapters its own timeouts and retries."""
    inner = client.client if isinstance(client, AsyncClient) else client
    with _shared_lock:
        _shared[(inner.url, inner.token, isinstance(client, AsyncClient))] = client
