"""The Blackboard: shared, versioned key/value state with watchers and request/reply.

Over 400 lines because keys, versions, watchers and request/reply share one lock and one commit
path (a request is a write plus a watcher on its reply key); split apart, the ordering
guarantees below would span modules.

Threading model
---------------
* Every read and write takes one short lock; nothing user-supplied runs under it
  (except the ``fn`` of :meth:`Blackboard.modify`, which must be quick and pure).
* Versions: one commit counter per blackboard. A write stamps the key with the
  commit number, so a key's version strictly increases, a deleted key has
  version 0, and a re-created key never reuses an old version (no ABA in
  :meth:`compare_and_set`). Versions of deleted keys are not kept (no growth).
* Watchers (on a key, a prefix ending in ``*`` or ``*`` itself) are matched at
  commit time and called with ``(key, old, new)`` *after* the lock is released,
  in commit order (``None`` stands for "absent"). Sync mode (default): the
  writing thread delivers; a single dispatch lock keeps the order even when
  several threads write at once, and ``set()`` returns after its watchers ran
  (a write made *inside* a watcher is delivered after the current one, by the
  same thread, so order still holds). ``async_watchers=True``: one private
  thread (``edgevox-bb-<name>``) delivers in commit order and ``set()`` returns
  at once; ``close()`` delivers what is pending and stops it.
* A watcher that raises is counted (``watcher_errors``) and passed to
  ``on_error(where, exc)`` (the Runtime turns it into an ErrorEvent); the other
  watchers still run. On the private delivery thread that holds for anything raised,
  ``SystemExit`` included; on a writer's own thread ``SystemExit`` and
  ``KeyboardInterrupt`` are counted, reported and re-raised (``runtime/guard.py``).

Request/reply
-------------
``post_request(key, task, timeout=...)`` writes a :class:`Request` to ``key``
(volunteers watch ``key`` and call ``reply_to(request, result)``), watches a
reply key unique to this call (``<key>/reply/<id>``) and returns a
``concurrent.futures.Future``. On reply, timeout or ``future.cancel()`` the
request key (if it still holds this request), the reply key and the reply watcher
are removed. Timeouts share one timer thread per blackboard (``edgevox-timer-<name>``),
started only when a request has a timeout; there is no thread per request. A timeout
must be a finite number of seconds up to ``limits.MAX_DURATION_S`` (or None): ``1e300``,
``inf`` or ``nan`` is a ``ValueError`` before anything is written, so no input can reach
(and kill) the timer thread.
A reply after resolution is dropped and counted in ``late_replies``.

Rejected alternative: a global blackboard (py_trees) - two runtimes in one process
must not see each other, so every Runtime owns one.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future, InvalidStateError
from dataclasses import dataclass
from typing import Any

from edgevox.errors import ArgumentError, LifecycleError
from edgevox.runtime.guard import must_propagate
from edgevox.runtime.limits import optional_duration, wait_s
from edgevox.runtime.timers import TimerHandle, TimerWheel

Watcher = Callable[[str, Any, Any], Any]
_ABSENT = object()


class Watch:
    """Handle returned by :meth:`Blackboard.watch`; ``close()`` (or ``with``, or calling it, as
    EdgeVox's ``unsubscribe()``) unregisters."""

    __slots__ = ("board", "pattern", "fn", "active", "_mode", "_prefix")

    def __init__(self, board: Blackboard, pattern: str, fn: Watcher) -> None:
        if not isinstance(pattern, str) or not pattern:
            raise TypeError(f"watch({pattern!r}, ...): the pattern must be a key, a prefix ending in '*', or '*'")
        if not callable(fn):
            raise TypeError(f"watch({pattern!r}, {fn!r}): the watcher must be callable as fn(key, old, new)")
        self.board = board
        self.pattern = pattern
        self.fn = fn
        self.active = True
        if pattern == "*":
            self._mode, self._prefix = "all", ""
        elif pattern.endswith("*"):
            self._mode, self._prefix = "prefix", pattern[:-1]
        else:
            self._mode, self._prefix = "key", pattern

    def close(self) -> None:
        self.board.unwatch(self)

    def __call__(self) -> None:
        """Unwatch: the EdgeVox spelling, where ``watch`` returned an ``unsubscribe`` function."""
        self.close()

    def __enter__(self) -> Watch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Watch({self.pattern!r}, active={self.active})"


@dataclass(frozen=True)
class Request:
    """A request posted with :meth:`Blackboard.post_request`; volunteers answer with ``reply_to``."""

    id: str
    request_key: str
    reply_key: str
    task: Any


class _Pending:
    __slots__ = ("request", "future", "watch", "timer", "replied")

    def __init__(self, request: Request, future: Future) -> None:
        self.request = request
        self.future = future
        self.watch: Watch | None = None
        self.timer: TimerHandle | None = None
        self.replied = False


class Blackboard:
    """Thread-safe versioned key/value store. See the module docstring for the semantics."""

    def __init__(
        self,
        *,
        async_watchers: bool = False,
        name: str = "blackboard",
        on_error: Callable[[str, BaseException], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name = name
        self.async_watchers = async_watchers
        self.on_error = on_error
        self._clock = clock
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)  # async mode: wakes the delivery thread
        self._data: dict[str, Any] = {}
        self._versions: dict[str, int] = {}
        self._commit = 0
        self._key_watches: dict[str, tuple[Watch, ...]] = {}
        self._prefix_watches: tuple[Watch, ...] = ()
        self._all_watches: tuple[Watch, ...] = ()
        self._pending: deque[tuple[tuple[Watch, ...], str, Any, Any]] = deque()
        self._dispatch_lock = threading.Lock()
        self._tls = threading.local()
        self._thread: threading.Thread | None = None
        self._requests: dict[str, _Pending] = {}
        self._timers: TimerWheel | None = None
        self._closed = False
        self.watcher_errors = 0
        self.late_replies = 0

    # -- reading -----------------------------------------------------------------------------

    def get(self, key: str, default: Any = None) -> Any:
        with self._lock:
            return self._data.get(key, default)

    def get_versioned(self, key: str) -> tuple[Any, int]:
        """``(value, version)``; ``(None, 0)`` when absent."""
        with self._lock:
            return self._data.get(key), self._versions.get(key, 0)

    def version(self, key: str) -> int:
        with self._lock:
            return self._versions.get(key, 0)

    def __contains__(self, key: str) -> bool:
        with self._lock:
            return key in self._data

    def keys(self, prefix: str = "") -> list[str]:
        with self._lock:
            return [k for k in self._data if k.startswith(prefix)]

    def snapshot(self) -> dict[str, Any]:
        """A consistent shallow copy of every key (taken under one lock)."""
        with self._lock:
            return dict(self._data)

    # -- writing -----------------------------------------------------------------------------

    def set(self, key: str, value: Any) -> int:
        """Write ``key``; returns its new version."""
        with self._lock:
            version = self._write_locked(key, value)
        self._dispatch()
        return version

    def delete(self, key: str) -> bool:
        """Remove ``key``; False if it was absent."""
        with self._lock:
            found = self._delete_locked(key)
        self._dispatch()
        return found

    def update(self, values: Mapping[str, Any] | None = None, *, delete: Iterable[str] = ()) -> int:
        """Write several keys (and delete others) atomically; returns the commit version.

        Readers and snapshots see all of it or none of it; watchers are notified in key order.
        """
        with self._lock:
            self._check_open()
            for key, value in (values or {}).items():
                self._write_locked(key, value)
            for key in delete:
                self._delete_locked(key)
            version = self._commit
        self._dispatch()
        return version

    def compare_and_set(self, key: str, value: Any, *, expected_version: int) -> bool:
        """Write only if ``key`` is still at ``expected_version`` (0 = must be absent)."""
        with self._lock:
            if self._versions.get(key, 0) != expected_version:
                return False
            self._write_locked(key, value)
        self._dispatch()
        return True

    def modify(self, key: str, fn: Callable[[Any], Any], default: Any = None) -> Any:
        """Atomic read-modify-write: ``key = fn(current or default)``; returns the new value.

        ``fn`` runs under the lock: keep it quick and never touch the blackboard from it.
        """
        with self._lock:
            new = fn(self._data.get(key, default))
            self._write_locked(key, new)
        self._dispatch()
        return new

    def _check_open(self) -> None:
        if self._closed:
            raise LifecycleError(f"Blackboard {self.name!r} is closed; create a new Runtime to write again")

    def _write_locked(self, key: str, value: Any) -> int:
        self._check_open()
        if not isinstance(key, str):
            raise TypeError(f"blackboard key {key!r}: keys are str")
        old = self._data.get(key)
        self._commit += 1
        self._data[key] = value
        self._versions[key] = self._commit
        self._queue_locked(key, old, value)
        return self._commit

    def _delete_locked(self, key: str) -> bool:
        self._check_open()
        if key not in self._data:
            return False
        old = self._data.pop(key)
        del self._versions[key]
        self._commit += 1
        self._queue_locked(key, old, None)
        return True

    # -- watchers ----------------------------------------------------------------------------

    def watch(self, pattern: str, fn: Watcher) -> Watch:
        """Call ``fn(key, old, new)`` after each commit to a matching key.

        ``pattern``: an exact key, a prefix ending in ``*`` (``"robot.*"`` matches
        ``"robot.pose"``), or ``"*"`` for every key.
        """
        watch = Watch(self, pattern, fn)
        with self._lock:
            self._check_open()
            if watch._mode == "all":
                self._all_watches += (watch,)
            elif watch._mode == "prefix":
                self._prefix_watches += (watch,)
            else:
                self._key_watches[pattern] = self._key_watches.get(pattern, ()) + (watch,)
        return watch

    def unwatch(self, watch: Watch) -> None:
        with self._lock:
            self._unwatch_locked(watch)

    def _unwatch_locked(self, watch: Watch) -> None:
        watch.active = False
        if watch._mode == "all":
            self._all_watches = tuple(w for w in self._all_watches if w is not watch)
        elif watch._mode == "prefix":
            self._prefix_watches = tuple(w for w in self._prefix_watches if w is not watch)
        else:
            rest = tuple(w for w in self._key_watches.get(watch.pattern, ()) if w is not watch)
            if rest:
                self._key_watches[watch.pattern] = rest
            else:
                self._key_watches.pop(watch.pattern, None)

    def watcher_count(self) -> int:
        with self._lock:
            return len(self._all_watches) + len(self._prefix_watches) + sum(map(len, self._key_watches.values()))

    def _queue_locked(self, key: str, old: Any, new: Any) -> None:
        watchers = self._key_watches.get(key, ()) + self._all_watches
        if self._prefix_watches:
            watchers += tuple(w for w in self._prefix_watches if key.startswith(w._prefix))
        if watchers:
            self._pending.append((watchers, key, old, new))
            if self.async_watchers:
                if self._thread is None:
                    self._thread = threading.Thread(
                        target=self._async_loop, name=f"edgevox-bb-{self.name}", daemon=True
                    )
                    self._thread.start()
                self._cond.notify()

    def _dispatch(self) -> None:
        """Sync mode: deliver pending notifications in commit order (see module docstring)."""
        if self.async_watchers or not self._pending or getattr(self._tls, "dispatching", False):
            return
        with self._dispatch_lock:
            self._tls.dispatching = True
            try:
                while True:
                    with self._lock:
                        if not self._pending:
                            return
                        item = self._pending.popleft()
                    self._deliver(item)
            finally:
                self._tls.dispatching = False

    def _async_loop(self) -> None:
        while True:
            with self._lock:
                while not self._pending and not self._closed:
                    self._cond.wait()
                if not self._pending:
                    return  # closed and delivered everything
                item = self._pending.popleft()
            self._deliver(item)

    def _deliver(self, item: tuple[tuple[Watch, ...], str, Any, Any]) -> None:
        watchers, key, old, new = item
        for watch in watchers:
            if not watch.active:
                continue
            try:
                watch.fn(key, old, new)
            except BaseException as exc:  # noqa: BLE001 - a watcher failure is counted and reported
                self.watcher_errors += 1
                self._report(f"blackboard {self.name!r} watcher {watch.pattern!r}", exc)
                if must_propagate(exc):
                    raise

    def _report(self, where: str, exc: BaseException) -> None:
        if self.on_error is not None:
            try:
                self.on_error(where, exc)
            except BaseException:  # noqa: BLE001 - the reporter itself failed; the error is counted
                pass

    # -- request / reply ---------------------------------------------------------------------

    def post_request(
        self, request_key: str, task: Any, timeout: float | None = None, *, if_absent: bool = False
    ) -> Future:
        """Post ``task`` on ``request_key``; the Future resolves with the first ``reply_to`` result.

        ``timeout`` (seconds, ``0 .. limits.MAX_DURATION_S``; None = no timeout): after it
        ``future.result()`` raises ``TimeoutError``. Anything else (``nan``, ``inf``, ``1e300``,
        a negative) is a ``ValueError`` and nothing is posted. ``if_absent``: refuse (an
        :class:`~edgevox.errors.ArgumentError`, nothing posted) when ``request_key`` already
        holds a value or a request, checked and posted under one lock (what a bridge serving
        peers needs: a peer never overwrites ``robot/pose``). Request ids are random (a peer
        cannot guess the reply key of someone else's request).
        """
        timeout = optional_duration("timeout", timeout, owner=f"Blackboard {self.name!r}.post_request")
        rid = secrets.token_hex(8)
        request = Request(id=rid, request_key=request_key, reply_key=f"{request_key}/reply/{rid}", task=task)
        future: Future = Future()
        entry = _Pending(request, future)
        watch = Watch(self, request.reply_key, lambda _k, _old, new: self._resolve(rid, new))
        with self._lock:
            self._check_open()
            if if_absent and request_key in self._data:
                raise ArgumentError(
                    f"Blackboard {self.name!r}.post_request: key {request_key!r} already holds a value or a "
                    "request; it is not overwritten (use another key, or wait until it is deleted)"
                )
            self._key_watches[watch.pattern] = self._key_watches.get(watch.pattern, ()) + (watch,)
            entry.watch = watch
            self._requests[rid] = entry
            if timeout is not None:
                if self._timers is None:
                    self._timers = TimerWheel(self.name, clock=self._clock, on_error=self._timer_failed)
                entry.timer = self._timers.call_later(timeout, lambda: self._expire(rid, timeout))
            self._write_locked(request_key, request)
        future.add_done_callback(lambda f: self._finish(rid) if f.cancelled() else None)
        self._dispatch()
        return future

    def reply_to(self, request: Request, result: Any) -> bool:
        """Answer ``request``. False (and ``late_replies`` += 1) if it was already resolved."""
        with self._lock:
            entry = self._requests.get(request.id)
            if entry is None or entry.replied:
                self.late_replies += 1
                return False
            entry.replied = True
            self._write_locked(request.reply_key, result)
        self._dispatch()
        return True

    def pending_requests(self) -> int:
        with self._lock:
            return len(self._requests)

    def _cleanup_locked(self, entry: _Pending) -> None:
        request = entry.request
        if entry.watch is not None:
            self._unwatch_locked(entry.watch)
        if entry.timer is not None:
            entry.timer.cancel()
        if self._closed:
            return
        if self._data.get(request.request_key, _ABSENT) is request:
            self._delete_locked(request.request_key)
        self._delete_locked(request.reply_key)

    def _finish(self, rid: str) -> _Pending | None:
        with self._lock:
            entry = self._requests.pop(rid, None)
            if entry is not None:
                self._cleanup_locked(entry)
        self._dispatch()
        return entry

    def _resolve(self, rid: str, result: Any) -> None:
        entry = self._finish(rid)
        if entry is not None:
            try:
                entry.future.set_result(result)
            except InvalidStateError:
                pass  # the caller cancelled it meanwhile

    def _timer_failed(self, exc: BaseException) -> None:
        self._report(f"blackboard {self.name!r} request timer", exc)

    def _expire(self, rid: str, timeout: float) -> None:
        with self._lock:
            entry = self._requests.get(rid)
            if entry is None or entry.replied:
                return  # a reply won the race; its delivery resolves the future
        entry = self._finish(rid)
        if entry is not None:
            try:
                entry.future.set_exception(
                    TimeoutError(
                        f"blackboard {self.name!r}: no reply to request {entry.request.request_key!r} "
                        f"within {timeout} s (is a volunteer watching that key?)"
                    )
                )
            except InvalidStateError:
                pass

    # -- lifecycle ---------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self, timeout_s: float = 1.0) -> list[str]:
        """Cancel pending requests, deliver pending async notifications and stop the private
        threads. Returns the names of threads that did not finish within ``timeout_s``.

        Safe from many threads at once: every caller waits (up to its own ``timeout_s``) for
        the private threads and names those still running.
        """
        timeout_s = wait_s("timeout_s", timeout_s, owner=f"Blackboard {self.name!r}.close")
        deadline = time.monotonic() + timeout_s
        with self._lock:
            pending = [] if self._closed else list(self._requests.values())
        for entry in pending:
            entry.future.cancel()  # its done-callback removes keys and watcher
        with self._lock:
            self._closed = True
            self._cond.notify_all()
            thread = self._thread
            timers = self._timers
        abandoned: list[str] = []
        if timers is not None:
            abandoned += timers.close(timeout_s)
        if thread is not None and thread is not threading.current_thread():
            thread.join(max(0.0, deadline - time.monotonic()))
            if thread.is_alive():
                abandoned.append(thread.name)
        return abandoned

    def __enter__(self) -> Blackboard:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Blackboard({self.name!r}, keys={len(self._data)})"
