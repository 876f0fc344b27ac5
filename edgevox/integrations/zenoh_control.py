"""The control lane of a Zenoh bridge: a stop is delivered and acknowledged, or reported.

Zenoh's default for a sample is to drop it when the link's queue is full. That is right for
a transcript and wrong for a stop: a robot whose link was backed up lost 5 of 8 stops that way
while its operator counted them as sent. So control events never travel as data:

**Sending** (an operator, or any process that forwards ``control.*``):

* Control events (``Event.control``: ``control.stop``, ``control.interrupt``) are put by one
  thread, ``edgevox-zenoh-control``, on publishers declared with real-time priority, express
  (not batched) and blocking congestion control: Zenoh queues them ahead of every data sample
  and never drops them. Data goes out on another thread (the bridge's ``zenoh-out``) with
  Zenoh's drop-when-full, so a backed-up link never delays a stop, and a lost data sample is
  counted by its receiver (``serialization.remote_seq``).
* A stop gets an id (:attr:`StopEvent.stop_id`) if it has none. Every bridge present in the
  namespace when it leaves (liveliness) must acknowledge it, and one seen before that has left
  (a robot that died) is reported ``unreachable`` at once; it is sent again every
  ``stop_retry_s`` to the namespace while one has not, until ``stop_deadline_s``. Then each
  peer is ``stopped`` (acknowledged in time) or ``unreachable``; one that acknowledges later
  becomes ``late``. A peer that leaves unacknowledged is ``unreachable`` at once. Until every
  peer acknowledged, the stop is sent again once a second for ``LATE_WINDOW_S``, so a robot
  whose link comes back (or that rejoins) still gets it. A
  :class:`~edgevox.integrations.events.StopDeliveryEvent` on the local bus and a log line say it
  at the deadline and again on every late acknowledgement. :meth:`ZenohBridge.safety_stop`
  sends one stop and returns its :class:`StopDelivery`.

**Receiving** (a robot):

* A new stop id goes to the local bus once (the runtime cancels every activity on the
  publisher's thread); then the robot acknowledges it on ``<namespace>/acks/<sender id>`` with
  what was running at that moment. A repeat of an id it has seen (a retry) is acknowledged
  again without acting twice; the last 256 ids are remembered.
* **Dead-man** (``deadman``, on by default): a bridge that takes stops from peers
  (``control.stop`` in ``subscribe_kinds``: a robot) watches every peer it accepted events
  from. When one leaves (its process ended, or it went silent for the Zenoh lease ``lease_s``)
  while something runs, the robot stops what is running, as if that peer had sent a stop. A
  skill started from a base station never outlives the base station.

Rejected alternative: acknowledging in the receiver's Zenoh callback - the ack would say
"received" before anything was cancelled; it is sent after the local stop has run.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
import uuid
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from edgevox.integrations.limits import BadInputLog, BridgeCounters
from edgevox.integrations.serialization import SerializationError, decode_json, encode_event, encode_json
from edgevox.integrations.zenoh_delivery import StopDelivery
from edgevox.runtime.events import Event, StopEvent

log = logging.getLogger(__name__)

LATE_WINDOW_S = 60.0
"""How long after its deadline a stop is still sent to peers that have not acknowledged it."""
LATE_RETRY_S = 1.0
"""Retry period after the deadline (the stop waits in Zenoh's queue of a blocked link anyway)."""
REMEMBERED_STOPS = 256
MAX_WAITING = 256
_ACK_KEYS = {"v", "stop_id", "bridge", "cancelled"}
_STOP = object()


@dataclass
class Seams:
    """What the control lane needs from its bridge, named (it never imports the bridge)."""

    namespace: str
    heard: tuple[str, ...]
    """Namespaces whose peers' acknowledgements come back to this bridge (a robot acknowledges
    in its own namespace)."""
    bridge_id: str
    session: Callable[[], Any]
    """The open Zenoh session, or None once closing."""
    zenoh: Callable[[], Any]
    targets: Callable[[str | None], tuple[set[str], set[str]]]
    """(peers present, peers seen before that left): who a stop must reach; given a namespace,
    only the peers whose liveliness token lives there."""
    publish_local: Callable[[Event], Any]
    """Hands an event to the bridge's inbox worker, which publishes it (never blocks)."""
    counters: BridgeCounters
    bad: BadInputLog
    homes: Callable[[set[str]], dict[str, str]] = lambda peers: {}
    """Peer id -> the namespace its liveliness token lives in, for those known: a retry goes
    there, to the robots that have not acknowledged, not again to the whole fleet."""


class ControlLane:
    """Sends control events and acknowledgements, tracks stop deliveries (see the module docstring)."""

    def __init__(self, seams: Seams, *, retry_s: float, deadline_s: float) -> None:
        self.seams = seams
        self.retry_s = retry_s
        self.deadline_s = deadline_s
        self._cond = threading.Condition()
        self._queue: deque[tuple[str, bytes, str | None]] = deque()
        """(key, payload, stop id): control events ("" for one that is not a stop) and
        acknowledgements (None) waiting to be put."""
        self._deliveries: dict[str, tuple[StopDelivery, bytes, float]] = {}
        self._publishers: dict[tuple[str, bool], Any] = {}
        self._seen: OrderedDict[str, list[str] | None] = OrderedDict()
        """Stop ids received (the last 256): None until applied, then what it cancelled."""
        self._waiting_acks: dict[str, set[str]] = {}
        """Stop ids received and not yet applied -> the peers that want the acknowledgement."""
        self._thread: threading.Thread | None = None
        self._closed = False

    # -- lifecycle ------------------------------------------------------------------------------

    def declare(self, session: Any, zenoh: Any) -> list[Any]:
        """The subscribers to acknowledgements addressed to this bridge (the caller keeps them)."""
        return [
            session.declare_subscriber(
                f"{namespace}/acks/{self.seams.bridge_id}", self._on_ack, allowed_origin=zenoh.Locality.REMOTE
            )
            for namespace in self.seams.heard
        ]

    def start(self) -> threading.Thread:
        self._thread = threading.Thread(target=self._loop, name="edgevox-zenoh-control", daemon=True)
        self._thread.start()
        return self._thread

    def close(self) -> None:
        """Stop the thread after what is queued now was put; undeclare the publishers."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    # -- sending -----------------------------------------------------------------------------------

    def send(self, event: Event, namespace: str = "") -> StopDelivery | None:
        """Queue a local control event for the peers (any thread, never blocks); ``namespace``:
        for the peers there only (one robot of a fleet). A stop gets an id and a
        :class:`StopDelivery` (returned); other control events are sent once."""
        delivery = None
        if isinstance(event, StopEvent):
            if not event.stop_id:
                event = dataclasses.replace(event, stop_id=uuid.uuid4().hex[:16])
            now = time.monotonic()
            present, gone = self.seams.targets(namespace or None)
            delivery = StopDelivery(
                event.stop_id,
                event.reason,
                frozenset(present | gone),
                now,
                now + self.deadline_s,
                left=set(gone),
                namespace=namespace,
            )
        key = f"{namespace or self.seams.namespace}/events/{event.kind}"
        payload = encode_event(event, self.seams.bridge_id)
        with self._cond:
            if self._closed:
                return delivery
            if len(self._queue) >= MAX_WAITING:
                self.seams.counters.add("control_dropped")
                self.seams.bad.warn(
                    "control-full", f"{MAX_WAITING} control messages wait to be sent; {event.kind} dropped"
                )
                return delivery
            self._queue.append((key, payload, delivery.stop_id if delivery is not None else ""))
            if delivery is not None:
                self._deliveries[delivery.stop_id] = (delivery, payload, delivery.sent_at + self.retry_s)
            self._cond.notify_all()
        return delivery

    def _loop(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._queue or self._closed, self._next_due())
                item = self._queue.popleft() if self._queue else None
                closed = self._closed and not self._queue
            if item is not None:
                key, payload, stop_id = item
                self._put(key, payload, block=stop_id is None or not self._behind(stop_id))
            if closed:
                self._publishers.clear()
                return
            self._tick(time.monotonic())

    def _next_due(self) -> float | None:
        if not self._deliveries:
            return None
        due = min(next_at for _, _, next_at in self._deliveries.values())
        return max(0.0, due - time.monotonic())

    def _tick(self, now: float) -> None:
        """Retry stops some peer has not acknowledged; report each stop at its deadline."""
        with self._cond:
            items = list(self._deliveries.items())
        for stop_id, (delivery, payload, next_at) in items:
            waiting = delivery.waiting
            if not delivery.reported and (now >= delivery.deadline_at or not waiting):
                delivery.reported = True
                self._report(delivery)
            if not delivery.unacknowledged or now >= delivery.deadline_at + LATE_WINDOW_S:
                with self._cond:
                    self._deliveries.pop(stop_id, None)
                continue
            if now >= next_at:
                self.seams.counters.add("stop_retries")
                for where in self._retry_namespaces(delivery):
                    self._put(f"{where}/events/{StopEvent.kind}", payload, block=False)
                period = self.retry_s if now < delivery.deadline_at else LATE_RETRY_S
                with self._cond:
                    if stop_id in self._deliveries:
                        self._deliveries[stop_id] = (delivery, payload, now + period)

    def _retry_namespaces(self, delivery: StopDelivery) -> set[str]:
        """Where a retry goes: the namespace of each robot that has not acknowledged (the one the
        stop was put in, for a robot whose namespace is not known)."""
        first = delivery.namespace or self.seams.namespace
        missing = delivery.unacknowledged
        homes = self.seams.homes(missing)
        return {homes.get(peer, first) for peer in missing} or {first}

    def _behind(self, stop_id: str) -> bool:
        """Some peer has not acknowledged a stop other than ``stop_id`` (and has not left)."""
        with self._cond:
            others = [d for other, (d, _, _) in self._deliveries.items() if other != stop_id]
        return any(d.waiting for d in others)

    def _put(self, key: str, payload: bytes, *, block: bool) -> None:
        """Put on a real-time, express publisher. ``block``: Zenoh waits for room in a full link
        queue instead of dropping. A new control event blocks only while every peer keeps up: a
        peer still behind on an earlier stop (frozen, its link full) has one waiting in its queue
        already, and a put that blocked on it would hold up the stops of every other robot on this
        one thread. Retries never block (the next one follows); acknowledgements always do."""
        session = self.seams.session()
        if session is None:
            return
        try:
            publisher = self._publishers.get((key, block))
            if publisher is None:
                zenoh = self.seams.zenoh()
                publisher = self._publishers[(key, block)] = session.declare_publisher(
                    key,
                    congestion_control=zenoh.CongestionControl.BLOCK if block else zenoh.CongestionControl.DROP,
                    priority=zenoh.Priority.REAL_TIME,
                    express=True,
                )
                if len(self._publishers) > 64:  # ack keys of many operators: keep the set bounded
                    self._publishers.pop(next(iter(self._publishers))).undeclare()
            publisher.put(payload)
            self.seams.counters.add("control_sent")
        except Exception as exc:  # noqa: BLE001 - the session closed under us; say it, never raise
            self.seams.counters.add("send_errors")
            self.seams.bad.warn("control-put", f"control message on {key!r} not sent: {exc!r}")

    def _report(self, delivery: StopDelivery) -> None:
        counters = self.seams.counters
        for status in delivery.peers.values():
            counters.add(f"stops_{'unreachable' if status == 'pending' else status}")
        line = delivery.describe()
        if delivery.delivered:
            log.info("zenoh bridge: %s", line)
        else:  # one line per 5 s at most (with how many were held back): a frozen link can miss many stops
            self.seams.bad.warn("stop-unreachable", f"{line}; a robot that did not confirm the stop may still move")
        self.seams.publish_local(delivery.event(source="zenoh"))

    # -- acknowledgements in ---------------------------------------------------------------------

    def _on_ack(self, sample: Any) -> None:
        """Zenoh thread: an acknowledgement from a peer. Never blocks, never raises."""
        try:
            data = decode_json(sample.payload.to_bytes(), max_bytes=65_536, max_depth=4)
            if not isinstance(data, dict) or set(data) != _ACK_KEYS or data.get("v") != 1:
                raise SerializationError(f"an acknowledgement has the keys {sorted(_ACK_KEYS)}")
            stop_id, peer, cancelled = data["stop_id"], data["bridge"], data["cancelled"]
            if not (isinstance(stop_id, str) and isinstance(peer, str) and isinstance(cancelled, list)):
                raise SerializationError("stop_id and bridge are strings, cancelled a list of strings")
        except SerializationError as exc:
            self.seams.counters.add("invalid")
            self.seams.bad.warn("ack", f"refused an acknowledgement: {exc}")
            return
        with self._cond:
            entry = self._deliveries.get(stop_id)
        if entry is None:
            return  # a repeat after the delivery closed, or an id we never sent
        delivery = entry[0]
        if delivery.ack(peer, [str(c)[:200] for c in cancelled[:64]], time.monotonic()) and delivery.reported:
            self.seams.counters.add("stops_late")
            self.seams.bad.warn("stop-late", f"{delivery.describe()} (acknowledged after stop_deadline_s)")
            self._wake()
            self.seams.publish_local(delivery.event(source="zenoh"))

    def _wake(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def peer_left(self, peer: str) -> None:
        with self._cond:
            deliveries = [d for d, _, _ in self._deliveries.values()]
        for delivery in deliveries:
            delivery.peer_left(peer)
        self._wake()

    # -- receiving stops (a robot) -------------------------------------------------------------------

    def repeat(self, stop_id: str, origin: str) -> bool:
        """Zenoh thread: True if ``stop_id`` was received before (a retry): it is acknowledged
        again once applied, never delivered twice."""
        with self._cond:
            if stop_id not in self._seen:
                return False
            applied = self._seen[stop_id]
            if applied is None:
                self._waiting_acks.setdefault(stop_id, set()).add(origin)
        self.seams.counters.add("stop_repeats")
        if applied is not None:
            self._acknowledge(stop_id, origin, applied)
        return True

    def accept(self, stop_id: str, origin: str) -> None:
        """Zenoh thread: a new stop goes to the inbox; remember its id and who wants the ack."""
        with self._cond:
            self._seen[stop_id] = None
            while len(self._seen) > REMEMBERED_STOPS:
                self._seen.popitem(last=False)
            self._waiting_acks.setdefault(stop_id, set()).add(origin)

    def applied(self, cancelled: list[str]) -> None:
        """The inbox worker published a received stop and the runtime acted on it: acknowledge
        every stop id received since (the inbox holds one waiting stop; later ids joined it)."""
        with self._cond:
            waiting, self._waiting_acks = self._waiting_acks, {}
            for stop_id in waiting:
                if stop_id in self._seen:
                    self._seen[stop_id] = cancelled
        for stop_id, origins in waiting.items():
            for origin in origins:
                self._acknowledge(stop_id, origin, cancelled)

    def _acknowledge(self, stop_id: str, origin: str, cancelled: list[str]) -> None:
        body = encode_json({"v": 1, "stop_id": stop_id, "bridge": self.seams.bridge_id, "cancelled": cancelled})
        with self._cond:
            if self._closed:
                return
            self._queue.append((f"{self.seams.namespace}/acks/{origin}", body, None))
            self._cond.notify_all()
