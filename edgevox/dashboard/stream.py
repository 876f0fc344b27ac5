"""One page's server-sent-event stream (``GET /api/events``), bounded so that no page can
keep the web server's loop busy or make it wait (``docs/dashboard.md``).

A page gets its snapshot, then every message queued in its
:class:`~edgevox.dashboard.feed.ClientFeed`, all that is queued in one write. It is refused
(503) when ``max_pages`` pages are open, and **shed** - its connection aborted, never
flushed or waited on - when its queue fills or a write is not taken within
``WRITE_TIMEOUT_S`` (a client that stopped reading). Its snapshot is built off the loop.

Rejected alternative: starlette's ``StreamingResponse`` (what this was first) - it awaits each
write for as long as the client takes, gives no way to cut a client that never reads, and
made a JSON encoding per page per message.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from edgevox.dashboard.feed import ClientFeed
from edgevox.dashboard.state import DashboardState

HEARTBEAT_S = 15.0
"""A comment line on an idle stream this often, so a closed page is noticed."""
WRITE_TIMEOUT_S = 2.0
"""A page whose connection does not take a write within this long is shed (it is not reading)."""

_STREAM_HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-store"),
    (b"x-accel-buffering", b"no"),
]


class EventStream:
    """``GET /api/events`` as a plain ASGI application (server loop): one page's snapshot, then
    every message (module docstring). ``abort(client)`` cuts the connection of the scope's
    ``client`` without flushing it (the server's)."""

    def __init__(self, state: DashboardState, abort: Callable[[Any], object]) -> None:
        self.state = state
        self.abort = abort

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        state = self.state
        loop = asyncio.get_running_loop()
        ready = asyncio.Event()
        client = scope.get("client")

        def woken() -> None:  # server loop
            ready.set()
            if feed is not None and feed.shed:  # cut at once, even while a write waits on it
                self.abort(client)

        def wake() -> None:  # any thread; at most one pending call per feed (feed.py)
            try:
                loop.call_soon_threadsafe(woken)
            except RuntimeError:
                pass  # the loop is closed: the stream is over anyway

        feed: ClientFeed | None = None
        if not state.full:  # checked here first: a refusal costs no hop to the executor
            feed = await loop.run_in_executor(None, state.connect, wake)
        else:
            state.refuse()
        if feed is None:
            error = f"{state.max_pages} pages are open already (dashboard.max_pages); close one"
            await JSONResponse({"ok": False, "error": error}, 503, {"Retry-After": "5"})(scope, receive, send)
            return
        gone = loop.create_task(self._until_disconnect(receive, feed))
        try:
            await send({"type": "http.response.start", "status": 200, "headers": _STREAM_HEADERS})
            chunk = "retry: 1000\n\n"
            while True:
                if chunk and not await self._write(send, chunk):
                    self._shed(client, feed)
                    return
                ready.clear()
                items = feed.take()
                if feed.shed:
                    self._shed(client, feed)
                    return
                if items:
                    chunk = "".join(items)
                    continue
                if feed.closed:
                    await self._write(send, "", more_body=False)
                    return
                try:
                    await asyncio.wait_for(ready.wait(), HEARTBEAT_S)
                    chunk = ""
                except asyncio.TimeoutError:
                    chunk = ": ping\n\n"
        finally:
            gone.cancel()
            state.disconnect(feed)

    @staticmethod
    async def _until_disconnect(receive: Receive, feed: ClientFeed) -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        feed.close()  # the page went away: end its stream (the close wakes it)

    @staticmethod
    async def _write(send: Send, chunk: str, *, more_body: bool = True) -> bool:
        """One write, given ``WRITE_TIMEOUT_S`` to be taken; False if the page is not reading."""
        message = {"type": "http.response.body", "body": chunk.encode(), "more_body": more_body}
        try:
            await asyncio.wait_for(send(message), WRITE_TIMEOUT_S)
        except asyncio.TimeoutError:
            return False
        return True

    def _shed(self, client: Any, feed: ClientFeed) -> None:
        """Cut a page that fell behind: abort its connection (nothing more is written to it)."""
        self.state.shed(feed)
        self.abort(client)


__all__ = ["HEARTBEAT_S", "WRITE_TIMEOUT_S", "EventStream"]
