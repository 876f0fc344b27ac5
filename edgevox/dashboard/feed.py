"""One open page's message queue: bounded, filled from any thread, drained by the web server.

The dashboard's bus subscriber thread puts messages here, each already encoded once as a
server-sent-event frame (:func:`frame`), so a message costs the same whatever the number of
pages; the server's asyncio loop takes them and writes them to the page in one write.

A put never blocks. When the page falls behind and its queue is full, the page is **shed**:
its queue is emptied (what it held is counted in ``dropped``), the feed closes, and the
server ends the page's connection at once. A browser's ``EventSource`` reconnects by itself
and gets a fresh snapshot first, so a slow page shows the present, never a state with holes;
a client that never reads costs at most ``max_messages`` frames and one connection, and
then nothing.

``wake`` is called (outside the lock, at most once until the next :meth:`ClientFeed.take`)
when the queue goes from empty to not empty, and when the feed closes; the server passes a
function that sets an ``asyncio.Event`` through ``loop.call_soon_threadsafe``, so the loop's
own queue of callbacks stays bounded too.

Rejected alternatives: an ``asyncio.Queue`` per page filled with ``call_soon_threadsafe(put)``
- each message would be a callback on the loop, an unbounded queue in front of the bounded
one; and replacing a full queue with a fresh snapshot (what this module did first) - a page
that never reads made the server build a snapshot per burst, and 300 of them starved the
Stop button.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

Message = dict[str, Any]


def frame(message: Message) -> str:
    """``message`` as one server-sent-event frame (``data: JSON``, a blank line after it)."""
    return f"data: {json.dumps(message, separators=(',', ':'))}\n\n"


def parse_frame(text: str) -> Message:
    """The message of one :func:`frame` (for tests and tools reading a feed)."""
    if not text.startswith("data: "):
        raise ValueError(f"not a server-sent-event data frame: {text[:40]!r}")
    return json.loads(text[6:])


class ClientFeed:
    """Frames for one open page (see the module docstring). Thread-safe."""

    def __init__(self, max_messages: int, wake: Callable[[], object] = lambda: None) -> None:
        if max_messages < 1:
            raise ValueError(f"ClientFeed max_messages = {max_messages}: must be >= 1")
        self.max_messages = max_messages
        self.dropped = 0
        """Messages this page never got because it fell behind (the full queue and the one
        that did not fit)."""
        self._wake = wake
        self._lock = threading.Lock()
        self._items: deque[str] = deque()
        self._wake_pending = False
        self._closed = False
        self._shed = False

    def put(self, item: str) -> bool:
        """Queue the frame ``item`` (any thread, never blocks); False if the feed is closed, or
        full: then the page is shed (module docstring)."""
        with self._lock:
            if self._closed:
                return False
            shed = len(self._items) >= self.max_messages
            if shed:
                self.dropped += len(self._items) + 1
                self._items.clear()
                self._closed = self._shed = True
            else:
                self._items.append(item)
            pending, self._wake_pending = self._wake_pending, True
        if not pending:
            self._wake()
        return not shed

    def take(self) -> list[str]:
        """Every frame queued, oldest first."""
        with self._lock:
            items = list(self._items)
            self._items.clear()
            self._wake_pending = False
            return items

    def close(self) -> None:
        """No more messages; the page's stream ends after what is queued."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            pending, self._wake_pending = self._wake_pending, True
        if not pending:
            self._wake()

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def shed(self) -> bool:
        """Whether the page was dropped for falling behind (its connection is to be cut)."""
        return self._shed

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)


__all__ = ["ClientFeed", "Message", "frame", "parse_frame"]
