"""Serving peers' blackboard requests for a :class:`~edgevox.integrations.zenoh_bridge.ZenohBridge`.

A peer's query to ``<ns>/blackboard/<key>`` asks this runtime to post a request on ``key``
and answer with whatever local agent replies. That is a write into the robot's shared
state by another process, so it is off unless ``serve_blackboard`` is on, and then:

* **Allowlist.** Only keys in ``serve_keys`` (exact, or a prefix ending in ``*``) are served.
  A query with wildcards, a key with a ``reply`` segment (a reply key of a pending request:
  writing it would resolve that request with the peer's data) and a key this bridge forwards
  are refused.
* **No overwrite.** A key that holds a value (``robot/pose``) or a request still pending is
  never replaced: the query is refused, nothing on the blackboard changes.
* **Timeouts.** The peer's ``timeout_s`` must be a finite number > 0 and is clamped to
  ``max_request_timeout_s`` before any timer sees it.
* **No worker is held while waiting.** A worker posts the request and returns; the reply is
  sent from the future's done-callback (a local agent's thread or the blackboard's timer).
  Slow requests therefore cannot starve others. At most ``max_served_requests`` wait at once
  per entry of ``serve_keys`` (more are answered ``busy``), so a flood on ``slow/*`` never
  makes ``plan`` busy.
* Bodies over ``max_payload_bytes`` or nested over ``max_depth`` are refused.

Every refusal is an error reply naming what was wrong and what to do, counted in
``bridge.counters`` (``requests_refused``, ``requests_busy``) and logged (rate-limited).

With a custom ``answer`` callable (``ZenohBridge(answer=...)``) the worker calls it and waits,
as that callable's contract is synchronous; the allowlist, limits and clamp still apply.

Threads: Zenoh's callback thread only checks the key and size and enqueues (bounded);
``edgevox-zenoh-query-N`` decode and post.
"""

from __future__ import annotations

import itertools
import logging
import queue
import threading
import time
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from edgevox.errors import ArgumentError
from edgevox.integrations.limits import peer_timeout
from edgevox.integrations.serialization import SerializationError, decode_json, encode_json

if TYPE_CHECKING:
    from edgevox.integrations.zenoh_bridge import ZenohBridge

log = logging.getLogger(__name__)

_STOP = object()
_BODY_KEYS = {"v", "origin", "payload", "timeout_s"}


def key_matches(key: str, patterns: list[str]) -> bool:
    """Blackboard watch syntax: exact key, a prefix ending in ``*``, or ``*``."""
    return any(p == "*" or p == key or (p.endswith("*") and key.startswith(p[:-1])) for p in patterns)


class PeerRequests:
    """The serving half of a bridge's blackboard requests (see the module docstring)."""

    def __init__(self, bridge: ZenohBridge) -> None:
        self.bridge = bridge
        self.config = bridge.config
        self.counters = bridge.counters
        self._queries: queue.Queue[Any] = queue.Queue(maxsize=64)
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._keys_in_flight: set[str] = set()
        self._pending: dict[int, tuple[Future, Any]] = {}
        self._per_pattern: dict[str, int] = {}
        self._ids = itertools.count(1)
        self._stopping = False
        self._prefix = f"{self.config.namespace}/blackboard/"

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        for i in range(2):
            thread = threading.Thread(target=self._loop, name=f"edgevox-zenoh-query-{i}", daemon=True)
            self._threads.append(thread)
            thread.start()

    def stop(self, deadline: float) -> bool:
        """Answer everything still waiting with an error, stop the workers. True if they ended."""
        self._stopping = True
        with self._lock:
            pending = list(self._pending.values())
        for future, _query in pending:
            future.cancel()  # the done-callback answers the peer; the blackboard cleans up its keys
        for _ in self._threads:
            self._queries.put(_STOP)
        clean = True
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))
            clean &= not thread.is_alive()
        while True:
            try:
                query = self._queries.get_nowait()
            except queue.Empty:
                break
            if query is not _STOP:
                self._refuse(query, "stopping", "the bridge is stopping; ask again later", count="requests_busy")
        return clean

    # -- Zenoh callback thread -------------------------------------------------------------------

    def on_query(self, query: Any) -> None:
        """Zenoh thread: check key and size, then hand over to a worker. Never blocks, never raises."""
        try:
            key_expr = str(query.key_expr)
            key = key_expr[len(self._prefix) :] if key_expr.startswith(self._prefix) else ""
            why = self.refusal(key)
            if why is not None:
                self._refuse(query, "key", f"key {key or key_expr!r} {why}")
                return
            size = len(query.payload) if query.payload is not None else 0
            if size > self.config.max_payload_bytes:
                self._refuse(
                    query,
                    "oversized",
                    f"request body is {size:,} bytes, over bridges.zenoh.max_payload_bytes = "
                    f"{self.config.max_payload_bytes:,}; send less or raise the limit on the serving robot",
                )
                return
            if self._stopping:
                self._refuse(query, "stopping", "the bridge is stopping; ask again later", count="requests_busy")
                return
            self._queries.put_nowait(query)
        except queue.Full:
            self._refuse(query, "busy", "busy: too many blackboard requests queued; retry later", count="requests_busy")
        except Exception as exc:  # noqa: BLE001 - never raise into Zenoh; count and answer
            self._refuse(query, "internal", f"request could not be handled: {type(exc).__name__}: {exc}")

    def refusal(self, key: str) -> str | None:
        """Why a peer may not post a request on ``key`` (None: it may)."""
        if not key or any(c in key for c in "*$?#") or key != key.strip("/"):
            return "is not one blackboard key (wildcards and empty keys are refused); query an exact key"
        if "reply" in key.split("/"):
            return "is a reply key; replies are written by local agents only"
        if key_matches(key, self.config.forward_requests):
            return "is forwarded by this bridge, not served here"
        if not key_matches(key, self.config.serve_keys):
            return (
                f"is not served: it is not in bridges.zenoh.serve_keys of {self.config.namespace!r} "
                f"(served: {', '.join(self.config.serve_keys) or 'none'})"
            )
        return None

    # -- workers ----------------------------------------------------------------------------------

    def _loop(self) -> None:
        while True:
            query = self._queries.get()
            if query is _STOP:
                return
            try:
                self._serve(query)
            except Exception as exc:  # noqa: BLE001 - a worker never dies on one query
                self._refuse(query, "internal", f"request could not be handled: {type(exc).__name__}: {exc}")

    def _serve(self, query: Any) -> None:
        key_expr = str(query.key_expr)
        key = key_expr[len(self._prefix) :]
        try:
            raw = query.payload.to_bytes() if query.payload is not None else b"{}"
            data = decode_json(raw, max_bytes=self.config.max_payload_bytes, max_depth=self.config.max_depth)
            if not isinstance(data, dict):
                raise SerializationError('request body must be a JSON object: {"payload": ..., "timeout_s": ...}')
            extra = set(data) - _BODY_KEYS
            if extra:
                raise SerializationError(f"request body has unknown keys {sorted(extra)}; expected payload, timeout_s")
            timeout_s = peer_timeout(
                data.get("timeout_s"), self.config.request_timeout_s, self.config.max_request_timeout_s
            )
        except (SerializationError, ValueError) as exc:
            self._refuse(query, getattr(exc, "reason", "invalid"), f"request on {key!r} refused: {exc}")
            return
        payload = data.get("payload")
        answer = self.bridge._answer
        if answer is not None:
            try:
                value = answer(key, payload, timeout_s)
            except Exception as exc:  # noqa: BLE001 - every failure is an error reply, never silence
                self._reply_err(query, f"{type(exc).__name__}: {exc}")
                self._finalise(query)
                return
            self._reply_value(query, key_expr, value)
            return
        self._post(query, key, key_expr, payload, timeout_s)

    def _post(self, query: Any, key: str, key_expr: str, payload: Any, timeout_s: float) -> None:
        board = self.bridge.blackboard
        pattern = next(p for p in self.config.serve_keys if key_matches(key, [p]))
        with self._lock:
            waiting = self._per_pattern.get(pattern, 0)
            if waiting >= self.config.max_served_requests:
                self._refuse(
                    query,
                    "busy",
                    f"busy: {waiting} peer requests on {pattern!r} already wait for a reply "
                    f"(bridges.zenoh.max_served_requests); retry later",
                    count="requests_busy",
                )
                return
            if key in self._keys_in_flight or key in board:
                self._occupied(query, key)
                return
            self._keys_in_flight.add(key)
            self._per_pattern[pattern] = waiting + 1
            token = next(self._ids)
        try:
            future = board.post_request(key, payload, timeout=timeout_s, if_absent=True)
        except ArgumentError:  # a local write landed since the check above: still never overwritten
            self._release(key, pattern)
            self._occupied(query, key)
            return
        except Exception as exc:  # noqa: BLE001 - a closed blackboard, a refused timeout
            self._release(key, pattern)
            self._reply_err(query, f"{type(exc).__name__}: {exc}")
            self._finalise(query)
            return
        with self._lock:
            self._pending[token] = (future, query)
        future.add_done_callback(lambda f: self._done(token, key, pattern, key_expr, query, f))

    def _release(self, key: str, pattern: str) -> None:
        with self._lock:
            self._keys_in_flight.discard(key)
            self._per_pattern[pattern] -= 1

    def _done(self, token: int, key: str, pattern: str, key_expr: str, query: Any, future: Future) -> None:
        """A local agent's thread or the blackboard timer: answer the peer, quickly."""
        with self._lock:
            self._pending.pop(token, None)
        self._release(key, pattern)
        if future.cancelled():
            self._reply_err(query, "cancelled: the serving bridge is stopping")
            self._finalise(query)
            return
        exc = future.exception()
        if exc is not None:
            self._reply_err(query, f"{type(exc).__name__}: {exc}")
            self._finalise(query)
            return
        self._reply_value(query, key_expr, future.result())

    # -- replies ------------------------------------------------------------------------------------

    def _reply_value(self, query: Any, key_expr: str, value: Any) -> None:
        try:
            body = encode_json({"v": 1, "origin": self.bridge.bridge_id, "value": value})
            if len(body) > self.config.max_payload_bytes:
                raise SerializationError(
                    f"the reply is {len(body):,} bytes, over bridges.zenoh.max_payload_bytes = "
                    f"{self.config.max_payload_bytes:,}"
                )
        except SerializationError as exc:
            self._reply_err(query, str(exc))
            self._finalise(query)
            return
        try:
            query.reply(key_expr, body)
            self.counters.add("requests_served")
        except Exception as exc:  # noqa: BLE001 - the querier timed out or the session closed
            log.info("zenoh bridge: reply to %r not delivered: %r", key_expr, exc)
        self._finalise(query)

    def _occupied(self, query: Any, key: str) -> None:
        self._refuse(
            query,
            "occupied",
            f"key {key!r} already holds a value or a pending request; a peer's request never "
            f"overwrites it (wait for the pending one, or use another key)",
        )

    def _refuse(self, query: Any, reason: str, message: str, *, count: str = "requests_refused") -> None:
        self.counters.add(count)
        self.bridge._bad.warn(f"request-{reason}", f"refused a peer's blackboard request: {message}")
        self._reply_err(query, message)
        self._finalise(query)

    @staticmethod
    def _reply_err(query: Any, message: str) -> None:
        try:
            query.reply_err(encode_json({"error": message}))
        except Exception:  # noqa: BLE001 - querier gone; nothing else to tell
            pass

    @staticmethod
    def _finalise(query: Any) -> None:
        try:
            query.drop()  # tells the querier no more replies are coming
        except Exception:  # noqa: BLE001 - already finalised
            pass
