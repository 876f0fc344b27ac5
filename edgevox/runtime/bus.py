"""The EventBus: typed publish/subscribe between the parts of one runtime.

Over 400 lines because the EventBus and its Subscription are one contract (delivery modes,
ordering, failure, closing) and nearly 50 of the lines are that contract, written below; the
Mailbox already lives in ``runtime/mailbox.py``.

Delivery modes
--------------
* **sync** (default): ``handler(event)`` runs on the publisher's thread, after the
  bus lock is released, in subscription order.
* **queued** (``queued=True``): each subscriber owns a bounded :class:`Mailbox`
  and a named worker thread (``edgevox-sub-<name>``) that calls the handler.
* **mailbox** (:meth:`EventBus.mailbox`): a bounded mailbox the caller drains
  itself (``get(timeout)``) - what BackgroundAgents and the voice loop use.

Ordering: FIFO per (publisher, subscriber). Control events (``Event.control``:
interrupt, stop, shutdown) overtake queued data events and are never dropped by
an overflow policy.

Overflow (``runtime/mailbox.py``): ``drop_oldest``, ``drop_new`` or ``block`` per
mailbox; every discard is counted in ``Subscription.dropped``. Stream events (reply
deltas, tokens, feedback ticks) yield to every other data event in a full mailbox and
their discards are counted apart, in ``Subscription.stream_dropped``.

Kinds: an event's topic is its class's ``kind``; an
:class:`~edgevox.runtime.events.AgentEvent` (ad-hoc kind, JSON payload) is routed by its
own ``kind``, so ``subscribe("sensor_alert", ...)`` receives ``AgentEvent("sensor_alert", ...)``.

Failure: a handler that raises never breaks the publisher or the other
handlers; it is counted (``Subscription.errors``, ``EventBus.stats``) and
reported as an :class:`~edgevox.runtime.events.ErrorEvent` with the traceback
(an error raised while handling an ErrorEvent is counted but not re-published,
so a broken error handler cannot loop). On a queued subscriber's worker that holds
for anything raised - ``SystemExit`` included - and the worker keeps delivering;
a sync handler's ``SystemExit`` / ``KeyboardInterrupt`` is counted, reported and
re-raised to the publisher, whose thread it is (``runtime/guard.py``). Should a
worker ever end for another reason, its subscription says so: ``active`` is False
and ``failure`` holds the cause.

Closing: ``Subscription.close()`` (or calling the subscription, EdgeVox's
``unsubscribe()``) stops delivery after the handler call in progress; every event it
leaves undelivered (queued, or taken in a batch but not yet handled) is counted in
``Subscription.discarded``. ``close`` and
``EventBus.close`` are safe to call from many threads at once: each caller waits
for the workers up to its own timeout and reports the ones still running.

Waits are checked (``runtime/limits.py``); so are mailbox sizes (``runtime/mailbox.py``).

Rejected alternative: one dispatcher thread for the whole bus (pipecat-style
per-pipeline queues) - a slow subscriber would delay everyone and a control
event could not overtake data queued for other subscribers.
"""

from __future__ import annotations

import fnmatch
import itertools
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

from edgevox.errors import BusClosedError
from edgevox.runtime.events import AgentEvent, ErrorEvent, Event
from edgevox.runtime.guard import must_propagate
from edgevox.runtime.limits import wait_s
from edgevox.runtime.mailbox import OVERFLOW_POLICIES, Mailbox, Overflow

__all__ = ["OVERFLOW_POLICIES", "EventBus", "Mailbox", "Overflow", "Subscription", "split_selector"]

Selector = "type[Event] | str | tuple[type[Event] | str, ...]"
Handler = Callable[[Event], Any]

MAX_AD_HOC_ROUTES = 4096
"""Routes of AgentEvent kinds cached per bus; past that the cache starts over (kinds with
ids in them must not grow it without bound)."""


def split_selector(selector: Any) -> tuple[tuple[type[Event], ...], tuple[str, ...]]:
    """``(event classes, topic patterns)`` of a subscription selector, or one TypeError."""
    items = selector if isinstance(selector, tuple) else (selector,)
    if not items:
        raise TypeError("subscribe(()): name at least one Event subclass or topic pattern")
    classes: tuple[type[Event], ...] = ()
    patterns: tuple[str, ...] = ()
    for item in items:
        if isinstance(item, str) and item:
            patterns += (item,)
        elif isinstance(item, type) and issubclass(item, Event):
            classes += (item,)
        else:
            raise TypeError(
                f"subscribe({item!r}): expected an Event subclass or a topic pattern string "
                "such as 'voice.*', 'sensor_alert' or '*'"
            )
    return classes, patterns


class Subscription:
    """Handle returned by :meth:`EventBus.subscribe`; ``close()`` (or ``with``, or calling it,
    as EdgeVox's ``unsubscribe()``) unsubscribes."""

    def __init__(self, bus: EventBus, selector: Any, handler: Handler | None, name: str, mailbox: Mailbox | None):
        self.bus = bus
        self.selector = selector
        self.handler = handler
        self.name = name
        self.mailbox = mailbox
        self.errors = 0
        self.delivered = 0
        self.failure: BaseException | None = None
        """Why the queued worker ended without ``close()`` (None while it serves or after close)."""
        self.thread: threading.Thread | None = None
        self._closed = False
        self._count_lock = threading.Lock()
        self._discarded = 0
        self._classes, self._patterns = split_selector(selector)

    def matches(self, event_type: type[Event], kind: str | None = None) -> bool:
        """Whether events of ``event_type`` (of ``kind``: an AgentEvent's own) are delivered here."""
        if self._classes and issubclass(event_type, self._classes):
            return True
        kind = event_type.kind if kind is None else kind
        return any(p == "*" or p == kind or fnmatch.fnmatchcase(kind, p) for p in self._patterns)

    @property
    def dropped(self) -> int:
        """Data events discarded by the overflow policy (stream events: :attr:`stream_dropped`)."""
        return self.mailbox.dropped if self.mailbox is not None else 0

    @property
    def stream_dropped(self) -> int:
        """Stream events (reply deltas, tokens) discarded to make room or by the policy."""
        return self.mailbox.stream_dropped if self.mailbox is not None else 0

    @property
    def discarded(self) -> int:
        """Events this subscription received but never delivered because it was closed
        (or its worker ended): queued ones and the rest of a batch in hand."""
        return self._discarded

    def _discard(self, n: int) -> None:
        if n:
            with self._count_lock:
                self._discarded += n

    @property
    def active(self) -> bool:
        """True while events are delivered: not closed and, for a queued subscriber, its worker
        still running."""
        if self._closed or self.failure is not None:
            return False
        thread = self.thread
        return thread is None or thread.ident is None or thread.is_alive()

    def get(self, timeout: float | None = None) -> Event | None:
        """For mailbox subscriptions: the next event, or None on timeout/closed."""
        if self.mailbox is None:
            raise TypeError(f"subscription {self.name!r} has no mailbox (it was made with a handler)")
        return self.mailbox.get(timeout)

    def close(self, timeout_s: float = 1.0) -> bool:
        """Unsubscribe; for queued subscribers also stop the worker (after the handler call in
        progress) and join it. Undelivered events are counted in :attr:`discarded`.

        Returns False if the worker did not finish within ``timeout_s`` (it is reported by
        ``EventBus.close``). Safe from many threads at once: each caller joins the worker up to
        its own ``timeout_s`` and gets the true answer.
        """
        timeout_s = wait_s("timeout_s", timeout_s, owner=f"Subscription {self.name!r}.close")
        with self._count_lock:
            first = not self._closed
            self._closed = True
        if first:
            self.bus._remove(self)
            if self.mailbox is not None:
                self.mailbox.close()
                if self.thread is not None:  # a queued subscriber: nothing more will be delivered
                    self._discard(len(self.mailbox.drain()))
        thread = self.thread
        if thread is not None and thread.ident is not None and thread is not threading.current_thread():
            thread.join(timeout_s)
            return not thread.is_alive()
        return True

    def __call__(self) -> bool:
        """Unsubscribe (``close()``): the EdgeVox spelling, where ``subscribe`` returned an
        ``unsubscribe`` function."""
        return self.close()

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Subscription({self.name!r}, {self.selector!r})"


class EventBus:
    """Typed pub/sub for one runtime. Thread-safe; see the module docstring for semantics."""

    def __init__(self, name: str = "bus") -> None:
        self.name = name
        self._lock = threading.Lock()
        self._subs: tuple[Subscription, ...] = ()
        self._observers: tuple[Subscription, ...] = ()
        self._route_cache: dict[type, tuple[Subscription, ...]] = {}
        self._seq = itertools.count(1)
        self._ids = itertools.count(1)
        self._closed = False
        self._closing: tuple[Subscription, ...] = ()
        self.published = 0
        self.handler_errors = 0
        self._attachments: dict[str, Any] = {}
        self._attach_lock = threading.Lock()

    # -- subscribing -------------------------------------------------------------------------

    def subscribe(
        self,
        selector: Any,
        handler: Handler,
        *,
        queued: bool = False,
        max_queue: int = 1024,
        overflow: Overflow = "drop_oldest",
        block_timeout_s: float = 0.1,
        name: str | None = None,
    ) -> Subscription:
        """Call ``handler(event)`` for every event matching ``selector`` (an Event class,
        a topic pattern like ``"voice.*"``, or a tuple of those).

        ``queued=False``: on the publisher's thread. ``queued=True``: on a worker thread
        named ``edgevox-sub-<name>`` fed by a bounded mailbox with the given overflow policy.
        Returns the :class:`Subscription`; ``close()`` it (or call it) to unsubscribe.
        """
        if not callable(handler):
            raise TypeError(f"subscribe({selector!r}, handler={handler!r}): the handler must be callable")
        name = name or f"{getattr(handler, '__qualname__', 'handler')}#{next(self._ids)}"
        checked = Mailbox(max_queue, overflow, block_timeout_s)  # checks the options even when unused
        sub = Subscription(self, selector, handler, name, checked if queued else None)
        if queued:
            sub.thread = threading.Thread(target=self._worker, args=(sub,), name=f"edgevox-sub-{name}", daemon=True)
        self._add(sub)
        if sub.thread is not None:
            sub.thread.start()
        return sub

    def mailbox(
        self,
        selector: Any,
        *,
        max_queue: int = 1024,
        overflow: Overflow = "drop_oldest",
        block_timeout_s: float = 0.1,
        name: str | None = None,
    ) -> Subscription:
        """A subscription whose events wait in a bounded mailbox for the caller to ``get()``."""
        name = name or f"mailbox#{next(self._ids)}"
        sub = Subscription(self, selector, None, name, Mailbox(max_queue, overflow, block_timeout_s))
        self._add(sub)
        return sub

    def add_observer(self, fn: Handler, name: str | None = None) -> Subscription:
        """``fn(event)`` sees every published event, on the publisher's thread, before subscribers."""
        if not callable(fn):
            raise TypeError(f"add_observer({fn!r}): the observer must be callable")
        sub = Subscription(self, "*", fn, name or f"observer#{next(self._ids)}", None)
        with self._lock:
            self._check_open()
            self._observers = self._observers + (sub,)
        return sub

    def _add(self, sub: Subscription) -> None:
        with self._lock:
            self._check_open()
            self._subs = self._subs + (sub,)
            self._route_cache = {}

    def _remove(self, sub: Subscription) -> None:
        with self._lock:
            if sub in self._subs:
                self._subs = tuple(s for s in self._subs if s is not sub)
                self._route_cache = {}
            elif sub in self._observers:
                self._observers = tuple(s for s in self._observers if s is not sub)

    def _check_open(self) -> None:
        if self._closed:
            raise BusClosedError(f"EventBus {self.name!r} is closed; create a new Runtime to publish again")

    # -- publishing --------------------------------------------------------------------------

    def publish(self, event: Event) -> Event:
        """Stamp ``seq`` (and ``timestamp`` if 0) and deliver. Returns the event."""
        if self._closed:
            raise BusClosedError(f"EventBus {self.name!r} is closed; cannot publish {event.kind!r}")
        event.seq = next(self._seq)
        if not event.timestamp:
            event.timestamp = time.time()
        self.published += 1
        etype = type(event)
        # an AgentEvent's topic is its own kind; every other event's is its class's
        key: Any = (etype, event.kind) if isinstance(event, AgentEvent) else etype
        route = self._route_cache.get(key)
        if route is None:
            with self._lock:
                route = tuple(s for s in self._subs if s.matches(etype, event.kind))
                if len(self._route_cache) >= MAX_AD_HOC_ROUTES:
                    self._route_cache = {}
                self._route_cache[key] = route
        for obs in self._observers:
            self._call(obs, event)
        for sub in route:
            mailbox = sub.mailbox
            if mailbox is not None:
                mailbox.put(event)
            else:
                self._call(sub, event)
        return event

    def _call(self, sub: Subscription, event: Event) -> None:
        try:
            sub.handler(event)  # type: ignore[misc]  # a subscription delivered here always has a handler (subscribe checks)
            sub.delivered += 1
        except BaseException as exc:  # noqa: BLE001 - handler failures are reported (runtime/guard.py)
            self._report(sub, event, exc)
            if must_propagate(exc):
                raise

    def _report(self, sub: Subscription, event: Event | None, exc: BaseException, where: str = "") -> None:
        sub.errors += 1
        self.handler_errors += 1
        if isinstance(event, ErrorEvent) or self._closed:
            return  # never loop on a failing error handler
        try:
            self.publish(
                ErrorEvent(
                    source=f"bus:{self.name}",
                    session_id=event.session_id if event is not None else None,
                    where=where or sub.name,
                    error=repr(exc),
                    traceback="".join(traceback.format_exception(type(exc), exc, exc.__traceback__)),
                    event_kind=event.kind if event is not None else "",
                )
            )
        except BusClosedError:
            pass  # closed meanwhile: the error is still counted

    def _worker(self, sub: Subscription) -> None:
        """Thread ``edgevox-sub-<name>``: deliver until closed. Handler failures never end it
        (``_call`` counts them); should anything else end it, the subscription says so."""
        mailbox = sub.mailbox
        assert mailbox is not None
        try:
            self._serve(sub, mailbox)
        except BaseException as exc:  # noqa: BLE001 - end visibly, never silently
            sub.failure = exc
            self._remove(sub)
            mailbox.close()
            sub._discard(len(mailbox.drain()))
            self._report(sub, None, exc, where=f"{sub.name} (worker ended; no more deliveries)")

    def _serve(self, sub: Subscription, mailbox: Mailbox) -> None:
        control = mailbox._control  # read without the lock: a cheap "did control arrive?" probe
        call = self._call
        while True:
            # Batches amortise the lock; a control event that arrives mid-batch is handled
            # before the next data event of the batch, so batching never delays control.
            batch = mailbox.get_batch(256, timeout=None)
            if not batch:
                return  # closed and empty
            for i, event in enumerate(batch):
                if sub._closed:
                    sub._discard(len(batch) - i)  # taken from the mailbox, never delivered
                    return
                if control and not event.control:
                    for urgent in mailbox.take_control():
                        call(sub, urgent)
                call(sub, event)

    def attachment(self, key: str, factory: Callable[[], Any]) -> Any:
        """Per-bus helper state (e.g. the request/reply table of ``edgevox.runtime.messages``):
        created once by ``factory()`` and kept for the bus's lifetime - state that belongs to
        one bus without any module global."""
        with self._attach_lock:
            obj = self._attachments.get(key)
            if obj is None:
                obj = self._attachments[key] = factory()
            return obj

    # -- lifecycle ---------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._closed

    def subscriptions(self) -> list[Subscription]:
        return list(self._subs)

    @property
    def stats(self) -> dict[str, Any]:
        subs = self._subs
        return {
            "published": self.published,
            "handler_errors": self.handler_errors,
            "subscribers": len(subs),
            "dropped": {s.name: s.dropped for s in subs if s.mailbox is not None and s.dropped},
            "stream_dropped": {s.name: s.stream_dropped for s in subs if s.mailbox is not None and s.stream_dropped},
        }

    def close(self, timeout_s: float = 2.0) -> list[str]:
        """Close every subscription and join queued workers. Returns the names of worker
        threads that did not finish within ``timeout_s`` (abandoned); [] means clean.

        Safe from many threads at once: every caller joins the workers up to its own
        ``timeout_s`` and names those still running."""
        timeout_s = wait_s("timeout_s", timeout_s, owner=f"EventBus {self.name!r}.close")
        with self._lock:
            if not self._closed:
                self._closed = True
                self._closing = self._subs
                self._subs = ()
                self._observers = ()
                self._route_cache = {}
            subs = self._closing
        deadline = time.monotonic() + timeout_s
        abandoned: list[str] = []
        for sub in subs:
            if not sub.close(timeout_s=max(0.0, deadline - time.monotonic())):
                abandoned.append(sub.thread.name if sub.thread else sub.name)
        return abandoned
