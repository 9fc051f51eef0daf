"""AsyncClient: the Client's calls as coroutines (docs/rl.md, "The client itself").

    async with AsyncClient() as kv:
        results = await asyncio.gather(*(kv.verify(r) for r in requests))
"""
import asyncio
import functools
from concurrent.futures import ThreadPoolExecutor

from .client import Client


class AsyncClient:
    """The Client's methods as coroutines, run on a thread pool of this client's own
    (`max_concurrency` threads, default 256), so that many calls may be awaited at
    once (asyncio.gather over a whole GRPO group) without waiting on asyncio's small
    default pool. Takes the Client's arguments. A cancelled await leaves its HTTP call
    running to its end in its thread."""

    def __init__(self, url=None, token=None, timeout_s=1800.0, retries=6, *, max_concurrency=256, **options):
        self.client = Client(url, token, timeout_s, retries, **options)
        self._executor = ThreadPoolExecutor(max_workers=max_concurrency, thread_name_prefix="kernelvault")

    def __repr__(self):
        return "AsyncClient(%r)" % self.client.url

    @property
    def url(self):
        return self.client.url

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        self.close()

    def close(self):
        """Lets the pool's threads end once their calls are done."""
        self._executor.shutdown(wait=False)

    async def _run(self, fn, *args, **kwargs):
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, functools.partial(fn, *args, **kwargs))

    async def verify(self, request=None, **fields):
        return await self._run(self.client.verify, request, **fields)

    async def submit_batch(self, requests):
        return await self._run(self.client.submit_batch, list(requests))

    async def get_batch(self, batch_id, wait_s=None):
        return await self._run(self.client.get_batch, batch_id, wait_s)

    async def stream_batch(self, batch_id):
        lines = self.client.stream_batch(batch_id)
        end = object()
        try:
            while True:
                item = await self._run(next, lines, end)
                if item is end:
                    return
                yield item
        finally:
            await self._run(lines.close)

    async def verify_batch(self, requests):
        return await self._run(self.client.verify_batch, list(requests))

    async def cancel_batch(self, batch_id):
        return await self._run(self.client.cancel_batch, batch_id)

    async def health(self):
        return await self._run(self.client.health)

    async def metrics(self):
        return await self._run(self.client.metrics)
