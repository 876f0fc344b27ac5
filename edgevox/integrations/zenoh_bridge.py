"""The bus over Zenoh: selected events and blackboard requests cross processes and machines.

Key expressions (``<ns>`` is ``ZenohBridgeConfig.namespace``, e.g. ``edgevox/robot1``)::

    <ns>/events/<kind>        one sample per forwarded event (JSON envelope, see serialization.py)
    <ns>/blackboard/<key>     queryable: a peer's blackboard request, answered by this runtime
    <ns>/bridges/<bridge id>  liveliness token: this bridge is up

Only events whose kind matches ``publish_kinds`` leave; only those matching
``subscribe_kinds`` enter, and only from the bridge's own namespace, so two robots
with different namespaces never see each other's events. Events a bridge injected
are marked (``serialization.mark_remote``) and never forwarded again, and the
subscriber ignores samples from its own session, so there is no echo loop.

Threads (all named ``edgevox-zenoh-*``):

* Zenoh's own threads run the sample/query/liveliness callbacks. They only decode,
  filter and enqueue (bounded queues, no locks held for long), never touch the bus.
* ``edgevox-zenoh-in`` publishes received events into the local bus.
* ``edgevox-sub-zenoh-out`` (a queued bus subscriber) puts local events on Zenoh, so a
  slow network never blocks a publisher on the bus.
* ``edgevox-zenoh-query-N`` answer blackboard requests from peers (they may wait for a
  local agent's reply, up to the request's timeout).
* ``edgevox-zenoh-forward-N`` send local blackboard requests on ``forward_requests`` keys to
  peers and ``reply_to`` them with the answer. A bridge never serves a key it forwards, so a
  request cannot bounce between processes.

Rejected alternative: forwarding every event and filtering at the receiver - it costs
bandwidth on a robot's Wi-Fi and leaks one robot's traffic to every listener.
"""

from __future__ import annotations

import fnmatch
import itertools
import json
import logging
import queue
import threading
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from edgevox.errors import BridgeError, BusClosedError, MissingDependencyError
from edgevox.integrations.config import ZenohBridgeConfig
from edgevox.integrations.events import BridgePeerEvent, BridgeStateEvent
from edgevox.integrations.serialization import (
    SerializationError,
    decode_event,
    decode_json,
    encode_event,
    encode_json,
    remote_origin,
)
from edgevox.runtime.blackboard import Request
from edgevox.runtime.bus import Mailbox
from edgevox.runtime.events import ErrorEvent, Event

if TYPE_CHECKING:
    from edgevox.runtime.bus import EventBus, Subscription

log = logging.getLogger(__name__)

RequestHandler = Callable[[str, Any, float], Any]
"""``answer(key, payload, timeout_s) -> value``: serves one blackboard request from a peer.
Raise to send an error reply (the message crosses, the traceback does not)."""

_STOP = object()


def _import_zenoh() -> Any:
    try:
        import zenoh
    except ImportError as exc:
        raise MissingDependencyError("eclipse-zenoh", extra="zenoh", purpose="the Zenoh bus bridge") from exc
    return zenoh


def build_zenoh_config(cfg: ZenohBridgeConfig) -> Any:
    """A ``zenoh.Config`` from ours: mode, endpoints, scouting and shared memory set explicitly."""
    zenoh = _import_zenoh()
    conf = zenoh.Config()
    try:
        conf.insert_json5("mode", json.dumps(cfg.mode))
        conf.insert_json5("listen/endpoints", json.dumps(cfg.listen))
        conf.insert_json5("connect/endpoints", json.dumps(cfg.connect))
        conf.insert_json5("scouting/multicast/enabled", json.dumps(cfg.multicast_scouting))
        conf.insert_json5("scouting/gossip/enabled", json.dumps(cfg.gossip_scouting))
        conf.insert_json5("transport/shared_memory/enabled", json.dumps(cfg.shared_memory))
        conf.insert_json5("transport/link/tx/lease", json.dumps(max(1, round(cfg.lease_s * 1000))))
    except Exception as exc:  # noqa: BLE001 - zenoh raises its own ZError type
        raise BridgeError(f"bridges.zenoh: invalid Zenoh setting: {exc}") from exc
    return conf


def _matches(kind: str, patterns: list[str]) -> bool:
    return any(p == "*" or p == kind or fnmatch.fnmatchcase(kind, p) for p in patterns)


class ZenohBridge:
    """Connects one runtime's bus (and blackboard) to a Zenoh session.

    ``answer`` serves blackboard requests from peers; when it is None and a
    ``blackboard`` is given, requests are posted on that blackboard and answered by
    whichever local agent replies (see :func:`blackboard_answerer`).

    ``start()`` opens the session and returns; ``stop(timeout_s)`` closes it and joins
    the bridge's threads, returning whether that was clean. Not restartable: make a
    new bridge (peers see the old one leave and the new one join).
    """

    def __init__(
        self,
        bus: EventBus,
        config: ZenohBridgeConfig,
        *,
        blackboard: Any = None,
        answer: RequestHandler | None = None,
        bridge_id: str | None = None,
    ) -> None:
        self.bus = bus
        self.config = config
        self.blackboard = blackboard
        self.bridge_id = bridge_id or uuid.uuid4().hex[:16]
        self._answer = answer
        self._session: Any = None
        self._zenoh: Any = None
        self._declared: list[Any] = []
        self._out_sub: Subscription | None = None
        self._inbox = Mailbox(config.max_inbox, "drop_oldest")
        self._queries: queue.Queue[Any] = queue.Queue(maxsize=256)
        self._forwards: queue.Queue[Any] = queue.Queue(maxsize=256)
        self._watches: list[Any] = []
        self._threads: list[threading.Thread] = []
        self._peers: set[str] = set()
        self._peers_cond = threading.Condition()
        self._state = "new"
        self._lock = threading.Lock()
        self._query_ids = itertools.count(1)
        self.sent = 0
        self.received = 0
        self.rejected = 0
        """Samples refused: bad payload, wrong kind, or a kind not in ``subscribe_kinds``."""
        self.send_errors = 0

    # -- key expressions -------------------------------------------------------------------

    @property
    def namespace(self) -> str:
        return self.config.namespace

    def event_key(self, kind: str, namespace: str | None = None) -> str:
        return f"{namespace or self.namespace}/events/{kind}"

    def blackboard_key(self, key: str, namespace: str | None = None) -> str:
        key = key.strip("/")
        if not key or any(c in key for c in "*$?#"):
            raise BridgeError(f"blackboard key {key!r}: must be non-empty without '*', '$', '?' or '#'")
        return f"{namespace or self.namespace}/blackboard/{key}"

    # -- lifecycle --------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._state == "running"

    def start(self) -> ZenohBridge:
        """Open the session, declare subscriber/queryable/token, start the workers. Returns self.

        Raises :class:`BridgeError` (e.g. the listen port is taken) with the session closed.
        """
        with self._lock:
            if self._state != "new":
                raise BridgeError(f"Zenoh bridge {self.bridge_id}: start() in state {self._state!r}; make a new bridge")
            self._state = "starting"
        zenoh = self._zenoh = _import_zenoh()
        conf = build_zenoh_config(self.config)
        try:
            self._session = zenoh.open(conf)
        except Exception as exc:  # noqa: BLE001 - ZError: port taken, bad endpoint...
            self._state = "failed"
            raise BridgeError(
                f"bridges.zenoh: cannot open a Zenoh session (listen={self.config.listen}, "
                f"connect={self.config.connect}): {exc}. Check that the port is free and the endpoint is "
                f"'<proto>/<host>:<port>'"
            ) from exc
        try:
            self._declare(zenoh)
        except Exception as exc:  # noqa: BLE001 - close what was opened, report one clear error
            self._close_session()
            self._state = "failed"
            raise BridgeError(f"bridges.zenoh: cannot declare Zenoh entities under {self.namespace!r}: {exc}") from exc
        self._start_thread("edgevox-zenoh-in", self._inbox_loop)
        if self._serves_requests:
            for i in range(2):
                self._start_thread(f"edgevox-zenoh-query-{i}", self._query_loop)
        if self.blackboard is not None and self.config.forward_requests:
            for i in range(2):
                self._start_thread(f"edgevox-zenoh-forward-{i}", self._forward_loop)
            for pattern in self.config.forward_requests:
                self._watches.append(self.blackboard.watch(pattern, self._on_local_request))
        if self.config.publish_kinds:
            self._out_sub = self.bus.subscribe(
                tuple(self.config.publish_kinds),
                self._forward,
                queued=True,
                max_queue=self.config.max_inbox,
                name="zenoh-out",
            )
        self._state = "running"
        self._publish_local(BridgeStateEvent(source="zenoh", bridge="zenoh", state="started", detail=self._describe()))
        return self

    @property
    def _serves_requests(self) -> bool:
        return self.config.serve_blackboard and (self._answer is not None or self.blackboard is not None)

    def _declare(self, zenoh: Any) -> None:
        session = self._session
        if self.config.subscribe_kinds:
            self._declared.append(
                session.declare_subscriber(
                    f"{self.namespace}/events/**", self._on_sample, allowed_origin=zenoh.Locality.REMOTE
                )
            )
        if self._serves_requests:
            self._declared.append(
                session.declare_queryable(
                    f"{self.namespace}/blackboard/**", self._on_query, allowed_origin=zenoh.Locality.REMOTE
                )
            )
        liveliness = session.liveliness()
        self._declared.append(
            liveliness.declare_subscriber(f"{self.namespace}/bridges/*", self._on_liveliness, history=True)
        )
        # Declared last: a peer that sees this token has already received our subscriber and
        # queryable declarations (same transport, in order), so it can send at once.
        self._declared.append(liveliness.declare_token(f"{self.namespace}/bridges/{self.bridge_id}"))

    def _describe(self) -> str:
        return f"namespace={self.namespace} mode={self.config.mode} listen={self.config.listen} connect={self.config.connect}"

    def _start_thread(self, name: str, target: Callable[[], None]) -> None:
        thread = threading.Thread(target=target, name=name, daemon=True)
        self._threads.append(thread)
        thread.start()

    def stop(self, timeout_s: float = 2.0) -> bool:
        """Stop forwarding, close the session, join the workers. True if every thread ended."""
        with self._lock:
            if self._state in ("stopped", "new", "failed"):
                self._state = "stopped" if self._state == "new" else self._state
                return True
            self._state = "stopping"
        deadline = time.monotonic() + timeout_s
        clean = True
        if self._out_sub is not None:
            clean &= self._out_sub.close(timeout_s=max(0.0, deadline - time.monotonic()))
        for watch in self._watches:
            watch.close()
        self._watches.clear()
        self._close_session()  # also ends forwarded queries still waiting for a reply
        self._inbox.close()
        for thread in self._threads:
            if thread.name.startswith("edgevox-zenoh-query"):
                self._queries.put(_STOP)
            elif thread.name.startswith("edgevox-zenoh-forward"):
                self._forwards.put(_STOP)
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))
            clean &= not thread.is_alive()
        # Queries still queued get an error reply instead of timing out at the peer.
        while True:
            try:
                q = self._queries.get_nowait()
            except queue.Empty:
                break
            if q is not _STOP:
                self._reply_err(q, "bridge stopping")
        self._state = "stopped"
        self._publish_local(BridgeStateEvent(source="zenoh", bridge="zenoh", state="stopped", detail=self._describe()))
        return clean

    def _close_session(self) -> None:
        session, self._session = self._session, None
        self._declared.clear()
        if session is not None:
            try:
                session.close()  # undeclares everything; peers see our token go at once
            except Exception as exc:  # noqa: BLE001 - closing must not raise in stop()
                log.warning("zenoh bridge %s: session.close() failed: %r", self.bridge_id, exc)

    def __enter__(self) -> ZenohBridge:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- peers -------------------------------------------------------------------------------

    @property
    def peers(self) -> set[str]:
        """Ids of the other bridges currently alive in this namespace."""
        with self._peers_cond:
            return set(self._peers)

    def wait_for_peers(self, count: int = 1, timeout_s: float = 10.0) -> bool:
        """Block until at least ``count`` other bridges are alive in this namespace."""
        with self._peers_cond:
            return self._peers_cond.wait_for(lambda: len(self._peers) >= count, timeout_s)

    def _on_liveliness(self, sample: Any) -> None:
        # Zenoh thread: update the set, hand the event to the inbox worker.
        peer = str(sample.key_expr).rsplit("/", 1)[-1]
        if peer == self.bridge_id:
            return
        joined = sample.kind == self._zenoh.SampleKind.PUT
        with self._peers_cond:
            if joined:
                self._peers.add(peer)
            else:
                self._peers.discard(peer)
            self._peers_cond.notify_all()
        self._inbox.put(
            BridgePeerEvent(source="zenoh", bridge="zenoh", peer=peer, state="joined" if joined else "left")
        )

    # -- events out ----------------------------------------------------------------------------

    def _forward(self, event: Event) -> None:
        """Bus worker thread: put a local event on Zenoh (never one that came from a peer)."""
        if remote_origin(event) is not None:
            return
        session = self._session
        if session is None:
            return
        try:
            payload = encode_event(event, self.bridge_id)
        except SerializationError as exc:
            self.send_errors += 1
            raise BridgeError(f"Zenoh bridge: event {event.kind!r} cannot be serialised: {exc}") from exc
        # Counted before the put: a peer may receive the event (and a test read this counter)
        # before the put returns on this thread.
        self.sent += 1
        try:
            session.put(self.event_key(event.kind), payload)
        except Exception as exc:  # noqa: BLE001 - session closed under us while stopping
            self.sent -= 1
            self.send_errors += 1
            if self._state == "running":
                raise BridgeError(f"Zenoh bridge: put {self.event_key(event.kind)!r} failed: {exc}") from exc

    # -- events in -------------------------------------------------------------------------------

    def _on_sample(self, sample: Any) -> None:
        """Zenoh thread: decode, filter, enqueue. Never blocks (drop-oldest inbox)."""
        key = str(sample.key_expr)
        key_kind = key[len(self.namespace) + len("/events/") :]
        try:
            event, origin = decode_event(sample.payload.to_bytes())
        except SerializationError as exc:
            self.rejected += 1
            log.warning("zenoh bridge: dropped sample on %r: %s", key, exc)
            return
        if origin == self.bridge_id or event.kind != key_kind or not _matches(event.kind, self.config.subscribe_kinds):
            self.rejected += 1
            return
        self.received += 1
        self._inbox.put(event)

    def _inbox_loop(self) -> None:
        while True:
            event = self._inbox.get(timeout=None)
            if event is None:
                return
            self._publish_local(event)

    def _publish_local(self, event: Event) -> None:
        try:
            self.bus.publish(event)
        except BusClosedError:
            pass  # the runtime is going down before the bridge; nothing to deliver to

    # -- blackboard requests -------------------------------------------------------------------------

    def request(
        self, key: str, payload: Any = None, *, timeout_s: float | None = None, namespace: str | None = None
    ) -> Any:
        """Ask a peer's blackboard (in ``namespace``, default ours) and return its reply value.

        Runs on the caller's thread and blocks up to ``timeout_s``. Raises
        :class:`BridgeError` if nobody answers in time or the peer replied with an error.
        """
        session = self._session
        if session is None or self._state != "running":
            raise BridgeError(f"Zenoh bridge {self.bridge_id}: request({key!r}) while not running; call start() first")
        timeout_s = self.config.request_timeout_s if timeout_s is None else timeout_s
        selector = self.blackboard_key(key, namespace)
        body = encode_json({"v": 1, "origin": self.bridge_id, "payload": payload, "timeout_s": timeout_s})
        try:
            replies = session.get(
                selector, payload=body, timeout=timeout_s, target=self._zenoh.QueryTarget.BEST_MATCHING
            )
            first = None
            for reply in replies:  # blocks until a reply arrives or the query times out
                first = reply
                break
        except Exception as exc:  # noqa: BLE001 - ZError from a closed session
            raise BridgeError(f"Zenoh bridge: request {selector!r} failed: {exc}") from exc
        if first is None:
            raise BridgeError(
                f"Zenoh bridge: no peer answered request {selector!r} within {timeout_s:.1f} s "
                f"(is a bridge with serve_blackboard running in namespace {namespace or self.namespace!r}?)"
            )
        if first.ok is None:
            message = first.err.payload.to_string() if first.err is not None else "unknown error"
            raise BridgeError(f"Zenoh bridge: request {selector!r} failed at the peer: {message}")
        try:
            data = decode_json(first.ok.payload.to_bytes())
        except SerializationError as exc:
            raise BridgeError(f"Zenoh bridge: reply to {selector!r} is not valid: {exc}") from exc
        if not isinstance(data, dict) or "value" not in data:
            raise BridgeError(f"Zenoh bridge: reply to {selector!r} has no 'value'")
        return data["value"]

    def _on_query(self, query: Any) -> None:
        """Zenoh thread: hand the query to a worker; refuse at once when the workers are swamped."""
        try:
            self._queries.put_nowait(query)
        except queue.Full:
            self._reply_err(query, "busy: too many pending blackboard requests")

    def _query_loop(self) -> None:
        while True:
            query = self._queries.get()
            if query is _STOP:
                return
            try:
                self._serve(query)
            finally:
                try:
                    query.drop()  # finalise now: tells the querier no more replies are coming
                except Exception:  # noqa: BLE001 - already finalised
                    pass

    def _serve(self, query: Any) -> None:
        key_expr = str(query.key_expr)
        key = key_expr[len(self.namespace) + len("/blackboard/") :]
        if _key_matches(key, self.config.forward_requests):
            # A key we forward is answered elsewhere; serving it too could bounce a request forever.
            self._reply_err(query, f"key {key!r} is forwarded by this bridge, not served here")
            return
        try:
            data = decode_json(query.payload.to_bytes()) if query.payload is not None else {}
            if not isinstance(data, dict):
                raise SerializationError("request body must be a JSON object")
            timeout_s = float(data.get("timeout_s") or self.config.request_timeout_s)
            answer = self._answer or blackboard_answerer(self.blackboard)
            value = answer(key, data.get("payload"), timeout_s)
            body = encode_json({"v": 1, "origin": self.bridge_id, "value": value})
        except Exception as exc:  # noqa: BLE001 - every failure becomes an error reply, never silence
            self._reply_err(query, f"{type(exc).__name__}: {exc}")
            return
        try:
            query.reply(key_expr, body)
        except Exception as exc:  # noqa: BLE001 - the querier timed out or the session closed
            log.info("zenoh bridge: reply to %r not delivered: %r", key_expr, exc)

    # -- local requests answered by peers (forward_requests) ----------------------------------------

    def _on_local_request(self, key: str, _old: Any, new: Any) -> None:
        """Blackboard watcher (the writer's thread): queue a fresh local request for a peer."""
        if not isinstance(new, Request) or new.request_key != key:
            return  # a deletion, or a reply key under a prefix pattern
        try:
            self._forwards.put_nowait(new)
        except queue.Full:
            self._report(f"zenoh bridge: request {key!r}", "too many requests waiting to be forwarded; dropped")

    def _forward_loop(self) -> None:
        while True:
            request = self._forwards.get()
            if request is _STOP:
                return
            try:
                value = self.request(request.request_key, request.task)
            except BridgeError as exc:
                # The local caller's own timeout resolves its future; this says why.
                if self._state == "running":
                    self._report(f"zenoh bridge: request {request.request_key!r}", str(exc))
                continue
            self.blackboard.reply_to(request, value)

    def _report(self, where: str, error: str) -> None:
        log.warning("%s: %s", where, error)
        self._publish_local(ErrorEvent(source="zenoh", where=where, error=error))

    def _reply_err(self, query: Any, message: str) -> None:
        try:
            query.reply_err(encode_json({"error": message}))
        except Exception:  # noqa: BLE001 - querier gone; nothing else to tell
            pass


def blackboard_answerer(blackboard: Any) -> RequestHandler:
    """Serve a peer's request by posting it on the local blackboard and waiting for a local reply."""
    if blackboard is None:
        raise BridgeError("Zenoh bridge: no blackboard to answer requests with")

    def answer(key: str, payload: Any, timeout_s: float) -> Any:
        future = blackboard.post_request(key, payload, timeout=timeout_s)
        try:
            return future.result(timeout_s + 1.0)
        except TimeoutError as exc:
            raise TimeoutError(f"no local agent replied to {key!r} within {timeout_s:.1f} s") from exc

    return answer


def _key_matches(key: str, patterns: list[str]) -> bool:
    """Blackboard watch syntax: exact key, a prefix ending in ``*``, or ``*``."""
    return any(p == "*" or p == key or (p.endswith("*") and key.startswith(p[:-1])) for p in patterns)
