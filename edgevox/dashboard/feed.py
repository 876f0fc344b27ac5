"""One open page's message queue: bounded, filled from any thread, drained by the web server.

The dashboard's bus subscriber thread puts messages here; the server's asyncio loop takes
them and writes them to the page as server-sent events. A put never blocks: when the page
falls behind and the queue is full, the message is dropped and counted, and the server
replaces what the page has with a fresh snapshot (so a slow page shows the present, never a
state with holes in it).

``wake`` is called (outside the lock, at most once until the next :meth:`ClientFeed.take`)
when the queue goes from empty to not empty; the server passes a function that sets an
``asyncio.Event`` through ``loop.call_soon_threadsafe``, so the loop's own queue of callbacks
stays bounded too.

Rejected alternative: an ``asyncio.Queue`` per page filled with ``call_soon_threadsafe(put)``
- each message would be a callback on the loop, an unbounded queue in front of the bounded one.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Any

Message = dict[str, Any]


class ClientFeed:
    """Messages for one open page (see the module docstring). Thread-safe."""

    def __init__(self, max_messages: int, wake: Callable[[], object] = lambda: None) -> None:
        if max_messages < 1:
            raise ValueError(f"ClientFeed max_messages = {max_messages}: must be >= 1")
        self.max_messages = max_messages
        self.dropped = 0
        """Messages dropped because the page fell behind (since it connected)."""
        self.resyncs = 0
        """Fresh snapshots sent after drops."""
        self._wake = wake
        self._lock = threading.Lock()
        self._items: deque[Message] = deque()
        self._overflowed = False
        self._wake_pending = False
        self._closed = False

    def put(self, message: Message) -> bool:
        """Queue ``message`` (any thread, never blocks); False if dropped (full or closed)."""
        with self._lock:
            if self._closed:
                return False
            if len(self._items) >= self.max_messages:
                self.dropped += 1
                self._overflowed = True
                return False
            self._items.append(message)
            if self._wake_pending:
                return True
            self._wake_pending = True
        self._wake()
        return True

    def take(self) -> tuple[list[Message], bool]:
        """Everything queued, and whether messages were dropped since the last take (the
        caller then sends a fresh snapshot instead: :meth:`reset`)."""
        with self._lock:
            items = list(self._items)
            self._items.clear()
            overflowed, self._overflowed = self._overflowed, False
            self._wake_pending = False
            return items, overflowed

    def reset(self, snapshot: Message) -> None:
        """Forget what is queued and queue ``snapshot`` first (called with the state's lock held,
        so no message is lost or repeated between the snapshot and the next ones)."""
        with self._lock:
            self._items.clear()
            self._items.append(snapshot)
            self.resyncs += 1
            pending, self._wake_pending = self._wake_pending, True
        if not pending:
            self._wake()

    def close(self) -> None:
        """No more messages; the page's stream ends after what is queued."""
        with self._lock:
            self._closed = True
            pending, self._wake_pending = self._wake_pending, True
        if not pending:
            self._wake()

    @property
    def closed(self) -> bool:
        return self._closed

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)


__all__ = ["ClientFeed", "Message"]
