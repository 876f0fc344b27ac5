"""The bus over Zenoh: selected events and blackboard requests cross processes and machines.

Over 400 lines because the bridge is one object with one lifecycle over one Zenoh session: its
publishers, subscribers, liveliness token and request forwarding are declared, counted and
undeclared together; serving blackboard requests and opening the session already live in
``zenoh_serve.py`` and ``zenoh_session.py``.

Key expressions (``<ns>`` is ``ZenohBridgeConfig.namespace``, e.g. ``edgevox/robot1``)::

    <ns>/events/<kind>        one sample per forwarded event (JSON envelope, see serialization.py)
    <ns>/blackboard/<key>     queryable: a peer's blackboard request, answered by this runtime
    <ns>/bridges/<bridge id>  liveliness token: this bridge is up
    <ns>/acks/<bridge id>     a robot's acknowledgement of a stop that bridge sent (zenoh_control.py)

Only events whose kind matches ``publish_kinds`` leave; only those matching
``subscribe_kinds`` enter, and only from the namespaces the bridge hears (:attr:`ZenohBridge.heard`:
its own, the ``fleet`` above a robot, the ``robots`` under an operator), so two robots with
different namespaces never see each other's events. One bridge, one session and one set of
threads serve all of them: an operator reaches N robots with the threads it has for one, and
lists them with :meth:`ZenohBridge.robots` (``zenoh_fleet.py``). Events a bridge injected
are marked (``serialization.mark_remote``) and never forwarded again, and the
subscriber ignores samples from its own session, so there is no echo loop.

Peers are untrusted input. A received sample is refused (and counted in
:attr:`ZenohBridge.counters`, with one rate-limited log line saying what to do) when its
kind is not subscribed, it is over ``max_payload_bytes`` or ``max_depth``, or a field has
the wrong type (pydantic, strict); control events are rate-limited per kind; the inbox is
bounded in count and bytes and holds at most one waiting event per control kind. Zenoh
reassembles at most 4 x ``max_payload_bytes`` per message (``transport/link/rx/max_message_size``),
so a huge message costs no memory here. Serving blackboard requests is off by default and
limited to ``serve_keys`` (see :mod:`edgevox.integrations.zenoh_serve`). Who may connect,
and what each peer may put or query, is Zenoh's own business: TLS endpoints and
``access_control`` in a Zenoh config file (``zenoh_config_file``, layered by
:mod:`edgevox.integrations.zenoh_session`), see ``docs/distributed.md``.

Threads (all named ``edgevox-zenoh-*``):

* Zenoh's own threads run the sample/query/liveliness callbacks. They only check, decode
  and enqueue (bounded queues, no locks held for long), never touch the bus, never raise.
* ``edgevox-zenoh-in`` publishes received events into the local bus.
* ``edgevox-sub-zenoh-out`` (a queued bus subscriber) puts local events on Zenoh, so a
  slow network never blocks a publisher on the bus.
* ``edgevox-zenoh-query-N`` post peers' blackboard requests (they never wait for the reply).
* ``edgevox-zenoh-forward-N`` send local blackboard requests on ``forward_requests`` keys to
  peers and ``reply_to`` them with the answer. A bridge never serves a key it forwards, so a
  request cannot bounce between processes.

Rejected alternative: forwarding every event and filtering at the receiver - it costs
bandwidth on a robot's Wi-Fi and leaks one robot's traffic to every listener.
"""

from __future__ import annotations

import fnmatch
import logging
import queue
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from edgevox.agents.events import SkillStateEvent
from edgevox.errors import BridgeError, BusClosedError
from edgevox.integrations.config import BRIDGE_ID, ZenohBridgeConfig
from edgevox.integrations.events import BridgePeerEvent, BridgeStateEvent
from edgevox.integrations.limits import BadInputLog, BridgeCounters, BridgeInbox, TokenBucket
from edgevox.integrations.serialization import (
    SerializationError,
    decode_event,
    decode_json,
    encode_event,
    encode_json,
    mark_remote,
    remote_origin,
)
from edgevox.integrations.zenoh_control import ControlLane, Seams
from edgevox.integrations.zenoh_delivery import StopDelivery
from edgevox.integrations.zenoh_fleet import MAX_PEERS, FleetPeer, PeerRoster
from edgevox.integrations.zenoh_serve import PeerRequests
from edgevox.integrations.zenoh_session import _import_zenoh, build_zenoh_config, exposure_warnings, fleet_refusal
from edgevox.runtime.blackboard import Request
from edgevox.runtime.events import ErrorEvent, Event, StopEvent
from edgevox.runtime.lifecycle import ComponentState, StopReport, component_lifecycle, stop_timeout

__all__ = ["COUNTERS", "ZenohBridge", "build_zenoh_config", "exposure_warnings"]

if TYPE_CHECKING:
    from edgevox.runtime.activities import ActivityRegistry
    from edgevox.runtime.bus import EventBus, Subscription

log = logging.getLogger(__name__)

RequestHandler = Callable[[str, Any, float], Any]
"""``answer(key, payload, timeout_s) -> value``: serves one blackboard request from a peer.
Raise to send an error reply (the message crosses, the traceback does not)."""

COUNTERS = (
    "sent",
    "send_errors",
    "received",
    "not_subscribed",
    "oversized",
    "too_deep",
    "invalid",
    "rate_limited",
    "inbox_dropped",
    "control_coalesced",
    "requests_served",
    "requests_refused",
    "requests_busy",
    "peers_refused",
    "mailbox_dropped",
    "data_lost",
    "control_sent",
    "control_dropped",
    "stop_retries",
    "stop_repeats",
    "stops_stopped",
    "stops_late",
    "stops_unreachable",
    "deadman_stops",
)
"""Names in :attr:`ZenohBridge.counters`. Refused samples: ``not_subscribed``, ``oversized``,
``too_deep``, ``invalid``; accepted then dropped: ``rate_limited``, ``inbox_dropped``,
``control_coalesced``; peers' blackboard requests: ``requests_*``; liveliness tokens with a
bad id or beyond :data:`MAX_PEERS`: ``peers_refused``. Lost on the way out and in:
``mailbox_dropped`` (local data events the outgoing queue discarded, ``max_inbox``),
``data_lost`` (gaps in a peer's numbering of its data events: Zenoh dropped them on a congested
link, or this bridge refused them); ``send_errors``. The control lane (``zenoh_control.py``):
``control_sent`` (puts, retries and acknowledgements included), ``control_dropped``,
``stop_retries``, ``stop_repeats`` (retries received), per robot and stop ``stops_stopped``,
``stops_late``, ``stops_unreachable``; ``deadman_stops``. Per peer: :meth:`ZenohBridge.peer_counters`."""
REJECTED = ("not_subscribed", "oversized", "too_deep", "invalid")
_STOP = object()


def _matches(kind: str, patterns: list[str]) -> bool:
    return any(p == "*" or p == kind or fnmatch.fnmatchcase(kind, p) for p in patterns)


class ZenohBridge:
    """Connects one runtime's bus (and blackboard) to a Zenoh session.

    ``answer`` serves blackboard requests from peers; when it is None and a
    ``blackboard`` is given, requests are posted on that blackboard and answered by
    whichever local agent replies. Either way only with ``serve_blackboard`` on, and only
    for ``serve_keys``.

    ``start()`` opens the session and returns; ``stop(timeout_s)`` closes it and joins
    the bridge's threads, returning whether that was clean. Not restartable: make a
    new bridge (peers see the old one leave and the new one join).

    :attr:`counters` counts everything sent, received, refused and dropped (see :data:`COUNTERS`).
    """

    def __init__(
        self,
        bus: EventBus,
        config: ZenohBridgeConfig,
        *,
        blackboard: Any = None,
        answer: RequestHandler | None = None,
        bridge_id: str | None = None,
        activities: ActivityRegistry | None = None,
    ) -> None:
        self.bus = bus
        self.config = config
        self.blackboard = blackboard
        self.bridge_id = bridge_id or config.bridge_id or uuid.uuid4().hex[:16]
        self._answer = answer
        self._session: Any = None
        self._zenoh: Any = None
        self._declared: list[Any] = []
        self._out_sub: Subscription | None = None
        self.counters = BridgeCounters(COUNTERS)
        self._bad = BadInputLog(log, f"zenoh bridge {config.namespace}")
        self._inbox = BridgeInbox(config.max_inbox, config.max_inbox_bytes, self.counters)
        self._control_rate = TokenBucket(config.max_control_per_s)
        self._serving = PeerRequests(self)
        self._forwards: queue.Queue[Any] = queue.Queue(maxsize=256)
        self._watches: list[Any] = []
        self._threads: list[threading.Thread] = []
        self.roster = PeerRoster(self.bridge_id)
        """The peers heard (present, and the last that left: a stop sent now reports those
        ``unreachable``, never leaves them out as if there were no robot), see ``zenoh_fleet.py``."""
        self._life = component_lifecycle(f"Zenoh bridge {self.bridge_id}", noun="bridge", error=BridgeError)
        self._lock = threading.Lock()
        self.activities = activities
        """What a received stop cancels is read here for its acknowledgement (None: not said)."""
        self._control = ControlLane(
            Seams(
                self.namespace,
                self.heard,
                self.bridge_id,
                lambda: self._session,
                lambda: self._zenoh,
                self._stop_targets,
                lambda event: self._inbox.put(event),
                self.counters,
                self._bad,
                homes=self.roster.homes,
            ),
            retry_s=config.stop_retry_s,
            deadline_s=config.stop_deadline_s,
        )
        self._control_sub: Subscription | None = None
        self._out_seq: dict[str, list[Any]] = {}
        """Per namespace put to (this one, or one robot's): [its lock, data samples put so far]."""
        self._in_seq: OrderedDict[tuple[str, str], int] = OrderedDict()
        self._peer_lost: dict[str, int] = {}
        self._commanders: OrderedDict[str, None] = OrderedDict()

    # -- counters -------------------------------------------------------------------------

    @property
    def sent(self) -> int:
        return self.counters["sent"]

    @property
    def received(self) -> int:
        """Samples accepted (decoded, typed, subscribed) and handed to the inbox."""
        return self.counters["received"]

    @property
    def rejected(self) -> int:
        """Samples refused: kind not subscribed, oversized, too deep or invalid."""
        snapshot = self.counters.snapshot()
        return sum(snapshot[name] for name in REJECTED)

    @property
    def send_errors(self) -> int:
        return self.counters["send_errors"]

    # -- key expressions -------------------------------------------------------------------

    @property
    def namespace(self) -> str:
        return self.config.namespace

    @property
    def heard(self) -> tuple[str, ...]:
        """The namespaces (key expressions) whose events, liveliness tokens and stop
        acknowledgements this bridge takes: its own, the ``fleet`` above it, the ``robots`` under it."""
        heard = [self.namespace]
        if self.config.fleet:
            heard.append(self.config.fleet)
        if self.config.robots:
            heard.append(f"{self.namespace}/{self.config.robots}")
        return tuple(heard)

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
        return self._life.state is ComponentState.RUNNING

    def start(self) -> ZenohBridge:
        """Open the session, declare subscriber/queryable/token, start the workers. Returns self.

        Raises :class:`BridgeError` (e.g. the listen port is taken) with the session closed.
        """
        self._life.to(ComponentState.STARTING, "start()")
        try:
            zenoh = self._zenoh = _import_zenoh()
            conf = build_zenoh_config(self.config)
        except Exception:
            self._life.to(ComponentState.FAILED)
            raise
        refusal = fleet_refusal(self.config, conf)
        if refusal:
            self._life.to(ComponentState.FAILED)
            raise BridgeError(refusal)
        for line in exposure_warnings(conf):
            log.warning("%s", line)
        try:
            self._session = zenoh.open(conf)
        except Exception as exc:  # noqa: BLE001 - ZError: port taken, bad endpoint, bad certificate...
            self._life.to(ComponentState.FAILED)
            raise BridgeError(
                f"bridges.zenoh: cannot open a Zenoh session (listen={self.config.listen}, "
                f"connect={self.config.connect}): {exc}. Check that the port is free and the endpoint is "
                f"'<proto>/<host>:<port>'"
            ) from exc
        try:
            self._declare(zenoh)
        except Exception as exc:  # noqa: BLE001 - close what was opened, report one clear error
            self._close_session()
            self._life.to(ComponentState.FAILED)
            raise BridgeError(f"bridges.zenoh: cannot declare Zenoh entities under {self.namespace!r}: {exc}") from exc
        self._start_thread("edgevox-zenoh-in", self._inbox_loop)
        self._threads.append(self._control.start())
        if self._serves_requests:
            self._serving.start()
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
            # Control events go out on their own lane at once, on the publisher's thread (a queue
            # append): never behind the data waiting in zenoh-out's mailbox.
            self._control_sub = self.bus.subscribe("control.*", self._forward_control, name="zenoh-control-out")
        self._life.to(ComponentState.RUNNING)
        self._publish_local(BridgeStateEvent(source="zenoh", bridge="zenoh", state="started", detail=self._describe()))
        return self

    @property
    def _serves_requests(self) -> bool:
        return self.config.serve_blackboard and (self._answer is not None or self.blackboard is not None)

    def _declare(self, zenoh: Any) -> None:
        session = self._session
        self._declared.extend(self._control.declare(session, zenoh))
        for namespace in self.heard if self.config.subscribe_kinds else ():
            self._declared.append(
                session.declare_subscriber(
                    f"{namespace}/events/**", self._on_sample, allowed_origin=zenoh.Locality.REMOTE
                )
            )
        if self._serves_requests:
            self._declared.append(
                session.declare_queryable(
                    f"{self.namespace}/blackboard/**", self._serving.on_query, allowed_origin=zenoh.Locality.REMOTE
                )
            )
        liveliness = session.liveliness()
        for namespace in self.heard:
            self._declared.append(
                liveliness.declare_subscriber(f"{namespace}/bridges/*", self._on_liveliness, history=True)
            )
        # Declared last: a peer that sees this token has already received our subscriber and
        # queryable declarations (same transport, in order), so it can send at once.
        self._declared.append(liveliness.declare_token(f"{self.namespace}/bridges/{self.bridge_id}"))

    def _describe(self) -> str:
        return f"namespace={self.namespace} heard={','.join(self.heard)} mode={self.config.mode} listen={self.config.listen} connect={self.config.connect}"

    def _start_thread(self, name: str, target: Callable[[], None]) -> None:
        thread = threading.Thread(target=target, name=name, daemon=True)
        self._threads.append(thread)
        thread.start()

    def stop(self, timeout_s: float | None = None, *, timeout: float | None = None) -> StopReport:
        """Stop forwarding, close the session, join the workers within ``timeout_s`` (default 2 s;
        ``timeout`` is EdgeVox's spelling). Truthy when every thread ended.

        Peers' requests still waiting get an error reply; none is left to time out.
        """
        timeout_s = stop_timeout(timeout_s, timeout, 2.0)
        with self._lock:
            if not self._life.to_if(ComponentState.STOPPING, ComponentState.RUNNING):
                self._life.to_if(ComponentState.STOPPED, ComponentState.NEW, ComponentState.FAILED)
                return StopReport()
        deadline = time.monotonic() + timeout_s
        abandoned: list[str] = []
        if self._control_sub is not None:
            self._control_sub.close()
        if self._out_sub is not None and not self._out_sub.close(timeout_s=max(0.0, deadline - time.monotonic())):
            abandoned.append("zenoh-out subscriber")
        self._control.close()  # what is queued (a last stop, acknowledgements) is put before the session closes
        control_thread = next((t for t in self._threads if t.name == "edgevox-zenoh-control"), None)
        if control_thread is not None:
            control_thread.join(max(0.0, deadline - time.monotonic()))
        for watch in self._watches:
            watch.close()
        self._watches.clear()
        if not self._serving.stop(deadline):  # before the session closes: the error replies go out
            abandoned.append("zenoh request workers")
        self._close_session()  # also ends forwarded queries still waiting for a reply
        self._inbox.close()
        for thread in self._threads:
            if thread.name.startswith("edgevox-zenoh-forward"):
                self._forwards.put(_STOP)
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))
            if thread.is_alive():
                abandoned.append(thread.name)
        self._life.to(ComponentState.STOPPED)
        self._publish_local(BridgeStateEvent(source="zenoh", bridge="zenoh", state="stopped", detail=self._describe()))
        return StopReport.abandoned_threads(abandoned)

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
        """Ids of the other bridges currently alive in the namespaces this bridge hears."""
        return self.roster.present

    def robots(self) -> list[FleetPeer]:
        """The inventory: every peer bridge present (and the last ones that left) with its
        namespace, when it was last heard and the goals it runs (see ``zenoh_fleet.py``)."""
        return self.roster.inventory()

    def _stop_targets(self, namespace: str | None = None) -> tuple[set[str], set[str]]:
        """(peers present, peers that left) when a stop is sent (to ``namespace`` only, if given)."""
        return self.roster.targets(namespace)

    def wait_for_peers(self, count: int = 1, timeout_s: float = 10.0) -> bool:
        """Block until at least ``count`` other bridges are alive in the namespaces this bridge hears."""
        return self.roster.wait_for(count, timeout_s)

    def _on_liveliness(self, sample: Any) -> None:
        # Zenoh thread: update the roster, hand the events to the inbox worker.
        try:
            namespace, _, peer = str(sample.key_expr).rpartition("/bridges/")
            if peer == self.bridge_id:
                return
            now = time.monotonic()
            if sample.kind == self._zenoh.SampleKind.PUT:
                joined = self.roster.join(peer, namespace, now)
                if joined is False:
                    self.counters.add("peers_refused")
                    self._bad.warn("peer", f"ignored liveliness token {peer[:80]!r}: bad id or over {MAX_PEERS} peers")
                if joined:
                    self._inbox.put(
                        BridgePeerEvent(source="zenoh", bridge="zenoh", peer=peer, namespace=namespace, state="joined")
                    )
                return
            goals = self.roster.leave(peer, now)
            if goals is None:
                return
            self._inbox.put(
                BridgePeerEvent(source="zenoh", bridge="zenoh", peer=peer, namespace=namespace, state="left")
            )
            for skill, goal_id in goals:
                # Its process died or its link went silent: the goal will never report an end here.
                self._inbox.put(
                    mark_remote(
                        SkillStateEvent(
                            source="zenoh",
                            skill=skill,
                            goal_id=goal_id,
                            state="lost",
                            error=f"robot {peer} ({namespace}) left while this goal ran; its final state is unknown",
                        ),
                        peer,
                    )
                )
            self._control.peer_left(peer)
            self._deadman(peer)
        except Exception as exc:  # noqa: BLE001 - never raise into Zenoh
            self.counters.add("peers_refused")
            self._bad.warn("peer-error", f"liveliness sample not handled: {exc!r}")

    def _deadman(self, peer: str) -> None:
        """Zenoh thread: a peer that commanded this robot left; stop what runs (``deadman``)."""
        with self._lock:
            commanded = peer in self._commanders
            self._commanders.pop(peer, None)
        if not (commanded and self.config.deadman):
            return
        if self.activities is not None and not len(self.activities):
            return  # nothing runs that it could have started
        reason = f"dead-man: peer {peer}, which commanded this robot, left (bridges.zenoh.deadman)"
        self.counters.add("deadman_stops")
        log.warning("zenoh bridge %s: %s; stopping what runs", self.namespace, reason)
        # Marked as the peer's: it is never forwarded, and the inbox worker handles it as a received stop.
        self._inbox.put(mark_remote(StopEvent(source="zenoh", reason=reason), peer))

    # -- events out ----------------------------------------------------------------------------

    def _forward_control(self, event: Event) -> None:
        """Publisher's thread: hand a local control event for the peers to the control lane."""
        if remote_origin(event) is None and _matches(event.kind, self.config.publish_kinds) and self.running:
            self._control.send(event)

    def safety_stop(
        self, reason: str = "operator stop", *, timeout_s: float | None = None, namespace: str | None = None
    ) -> StopDelivery:
        """Stop every robot in this namespace (with ``namespace``: the robot of a fleet there
        only, e.g. ``edgevox/site1/r2``) and wait until each acknowledged it or
        ``timeout_s`` (default ``stop_deadline_s``) passed. Returns the :class:`StopDelivery`:
        ``delivery.peers`` says per robot ``stopped``, ``late``, ``unreachable`` (or ``pending``
        when ``timeout_s`` is shorter than the deadline); the stop keeps being retried, and
        reported on the bus, after this returns. Only the peers: publish a ``StopEvent`` on the
        local bus to stop this process too (with ``control.stop`` in ``publish_kinds`` it also
        reaches the peers, the same way)."""
        if not self.running:
            raise BridgeError(f"Zenoh bridge {self.bridge_id}: safety_stop() while not running; call start() first")
        where = self._one_namespace(namespace, "safety_stop") if namespace is not None else ""
        delivery = self._control.send(StopEvent(source="zenoh", reason=reason), where)
        assert delivery is not None  # a StopEvent always gets one
        delivery.wait(self.config.stop_deadline_s if timeout_s is None else timeout_s)
        return delivery

    def peer_counters(self) -> dict[str, dict[str, int]]:
        """Per peer bridge id: ``data_lost`` (its data events that never arrived here)."""
        with self._lock:
            return {peer: {"data_lost": lost} for peer, lost in self._peer_lost.items()}

    def _forward(self, event: Event) -> None:
        """Bus worker thread: put a local data event on Zenoh (never one that came from a peer).
        Control events take the control lane (:meth:`_forward_control`)."""
        if self._out_sub is not None:
            dropped = self._out_sub.dropped
            counted = self.counters["mailbox_dropped"]
            if dropped > counted:
                self.counters.add("mailbox_dropped", dropped - counted)
        if event.control or remote_origin(event) is not None:
            return
        self._put_data(event, self.namespace)

    def send(self, event: Event, *, namespace: str) -> None:
        """Put one data event in another namespace this bridge reaches, e.g. one robot of the
        fleet (``namespace`` of its row in :meth:`robots`), on the caller's thread. The local bus
        does not see it. Zenoh drops it (and the robot counts it lost) when that robot's link is
        full; the links to the other robots are not slowed. Stops: :meth:`safety_stop`."""
        if event.control:
            raise BridgeError(
                f"Zenoh bridge: send() carries data; a {event.kind!r} goes on the control lane: publish it on the "
                f"local bus (or call safety_stop())"
            )
        if not self.running:
            raise BridgeError(f"Zenoh bridge {self.bridge_id}: send() while not running; call start() first")
        self._put_data(event, self._one_namespace(namespace, "send"))

    @staticmethod
    def _one_namespace(namespace: str, call: str) -> str:
        namespace = namespace.strip("/")
        if not namespace or any(c in namespace for c in "*$?#") or any(c.isspace() for c in namespace):
            raise BridgeError(
                f"Zenoh bridge: {call}(namespace={namespace!r}): name one robot's namespace, e.g. "
                f"'edgevox/site1/r1' (no '*', '$', '?', '#' or spaces); robots() lists them"
            )
        return namespace

    def _put_data(self, event: Event, namespace: str) -> None:
        session = self._session
        if session is None:
            return
        try:
            payload = encode_event(event, self.bridge_id)
        except SerializationError as exc:
            self.counters.add("send_errors")
            raise BridgeError(f"Zenoh bridge: event {event.kind!r} cannot be serialised: {exc}") from exc
        if len(payload) > self.config.max_payload_bytes:
            self.counters.add("send_errors")
            raise BridgeError(
                f"Zenoh bridge: event {event.kind!r} is {len(payload):,} bytes, over bridges.zenoh.max_payload_bytes "
                f"= {self.config.max_payload_bytes:,}; peers would refuse it, so it was not sent (raise the limit on "
                f"every robot, or send less)"
            )
        # Counted before the put: a peer may receive the event (and a test read this counter)
        # before the put returns on this thread.
        self.counters.add("sent")
        key = self.event_key(event.kind, namespace)
        with self._lock:
            stream = self._out_seq.get(namespace)
            if stream is None:
                stream = self._out_seq[namespace] = [threading.Lock(), 0]
                if len(self._out_seq) > MAX_PEERS:
                    self._out_seq.pop(next(iter(self._out_seq)))
        lock: threading.Lock = stream[0]
        # Numbered and put in one step per namespace (the numbers leave in order); a put that waits
        # on one robot's full link never holds up another robot's.
        with lock:
            seq = stream[1] = stream[1] + 1
            try:
                # The attachment numbers this bridge's data samples per namespace: a receiver that
                # sees 19 after 17 there counts one lost (Zenoh drops data on a congested link).
                session.put(key, payload, attachment=f"{self.bridge_id}:{seq}".encode())
            except Exception as exc:  # noqa: BLE001 - session closed under us while stopping
                self.counters.add("sent", -1)
                self.counters.add("send_errors")
                if self.running:
                    raise BridgeError(f"Zenoh bridge: put {key!r} failed: {exc}") from exc

    # -- events in -------------------------------------------------------------------------------

    def _on_sample(self, sample: Any) -> None:
        """Zenoh thread: check, decode, enqueue. Never blocks, never raises, counts every refusal."""
        try:
            self._receive(sample)
        except Exception as exc:  # noqa: BLE001 - the last line of defence: count it, say it
            self.counters.add("invalid")
            self._bad.warn("internal", f"a sample could not be handled: {type(exc).__name__}: {exc}")

    def _receive(self, sample: Any) -> None:
        cfg = self.config
        key = str(sample.key_expr)
        where, _, kind = key.rpartition("/events/")
        self._count_gaps(sample.attachment, where)
        if not _matches(kind, cfg.subscribe_kinds):
            self.counters.add("not_subscribed")  # ordinary traffic for other listeners: no log line
            return
        size = len(sample.payload)
        try:
            if size > cfg.max_payload_bytes:
                raise SerializationError(
                    f"payload is {size:,} bytes, over the limit of {cfg.max_payload_bytes:,}", "oversized"
                )
            event, origin = decode_event(
                sample.payload.to_bytes(), max_bytes=cfg.max_payload_bytes, max_depth=cfg.max_depth
            )
            if event.kind != kind:
                raise SerializationError(f"its key says {kind!r} but the payload is a {event.kind!r}")
            if origin == self.bridge_id:
                raise SerializationError(f"it claims this bridge's own id {origin!r} as its origin")
            if not self.roster.speaks_for(origin, where):
                # With a fleet's access control a peer can put only in its own namespace: the
                # namespace is who sent it, and an envelope naming another peer is a forgery.
                raise SerializationError(
                    f"it claims to be {origin!r}, whose bridge lives elsewhere, but came on {where!r}"
                )
        except SerializationError as exc:
            self.counters.add(exc.reason)
            self._bad.warn(exc.reason, f"refused a sample on {key!r}: {exc}{_HINTS.get(exc.reason, '')}")
            return
        self.roster.heard(origin, time.monotonic(), event)
        if _matches(StopEvent.kind, cfg.subscribe_kinds):
            self._note_commander(origin)
        stop_id = event.stop_id if isinstance(event, StopEvent) else ""
        if stop_id and self._control.repeat(stop_id, origin):
            return  # a retry of a stop already here: acknowledged (again), not delivered twice
        # A stop is never rate-limited: at most one waits in the inbox (later ones join it), so a
        # flood of stops costs one cancel at a time, and every stop is acknowledged once it acted.
        if event.control and not stop_id and not self._control_rate.allow(event.kind):
            self.counters.add("rate_limited")
            self._bad.warn(
                "rate",
                f"dropped {event.kind!r} from {origin!r}: more than {cfg.max_control_per_s:g} per second "
                f"(bridges.zenoh.max_control_per_s); the ones let through already act",
            )
            return
        if stop_id:
            self._control.accept(stop_id, origin)
        self.counters.add("received")
        self._inbox.put(event, size)

    def _note_commander(self, origin: str) -> None:
        """A peer sent this robot an event it accepted: the dead-man watches that peer."""
        with self._lock:
            self._commanders[origin] = None
            self._commanders.move_to_end(origin)
            while len(self._commanders) > MAX_PEERS:
                self._commanders.popitem(last=False)

    def _count_gaps(self, attachment: Any, namespace: str) -> None:
        """Zenoh thread: count data samples a peer numbered (per namespace it put them in) that
        never arrived (``data_lost``)."""
        if attachment is None:
            return  # a control sample (acknowledged instead), or a sender that does not number
        try:
            sender, _, number = attachment.to_bytes()[:96].decode("ascii").rpartition(":")
            seq = int(number)
        except (UnicodeDecodeError, ValueError):
            return  # not ours to judge; the payload checks refuse what is wrong
        if not BRIDGE_ID.match(sender) or seq < 1:
            return
        with self._lock:
            last = self._in_seq.pop((sender, namespace), 0)
            self._in_seq[(sender, namespace)] = max(seq, last)
            while len(self._in_seq) > MAX_PEERS:
                self._in_seq.popitem(last=False)
            lost = seq - last - 1 if last and seq > last else 0
            if lost:
                self._peer_lost[sender] = self._peer_lost.get(sender, 0) + lost
                while len(self._peer_lost) > MAX_PEERS:
                    self._peer_lost.pop(next(iter(self._peer_lost)))
        if lost:
            self.counters.add("data_lost", lost)
            self._bad.warn(
                "lost",
                f"{lost} data event(s) from {sender!r} never arrived (a congested link drops data; control "
                f"events are never dropped)",
            )

    def _inbox_loop(self) -> None:
        while True:
            event = self._inbox.get(timeout=None)
            if event is None:
                return
            if isinstance(event, StopEvent) and remote_origin(event) is not None:
                # The runtime cancels on this thread, inside publish; the acknowledgement follows.
                running = [a.label for a in self.activities.running()] if self.activities is not None else []
                self._publish_local(event)
                self._control.applied(running)
                continue
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
        :class:`BridgeError` if nobody answers in time, the peer refused or replied with an
        error, or its reply is over the limits.
        """
        session = self._session
        if session is None or not self.running:
            raise BridgeError(f"Zenoh bridge {self.bridge_id}: request({key!r}) while not running; call start() first")
        timeout_s = self.config.request_timeout_s if timeout_s is None else timeout_s
        selector = self.blackboard_key(key, namespace)
        try:
            body = encode_json({"v": 1, "origin": self.bridge_id, "payload": payload, "timeout_s": timeout_s})
        except SerializationError as exc:
            raise BridgeError(f"Zenoh bridge: request {selector!r}: {exc}") from exc
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
                f"(is a bridge with serve_blackboard and {key!r} in serve_keys running in namespace "
                f"{namespace or self.namespace!r}?)"
            )
        limit = self.config.max_payload_bytes
        if first.ok is None:
            err = first.err.payload if first.err is not None else None
            message = "unknown error"
            if err is not None and len(err) <= limit:
                try:
                    data = decode_json(err.to_bytes(), max_depth=4)
                    message = str(data.get("error") if isinstance(data, dict) else data)[:500]
                except SerializationError:
                    message = err.to_bytes()[:500].decode("utf-8", "replace")
            raise BridgeError(f"Zenoh bridge: request {selector!r} failed at the peer: {message}")
        reply_payload = first.ok.payload
        try:
            if len(reply_payload) > limit:
                raise SerializationError(
                    f"it is {len(reply_payload):,} bytes, over bridges.zenoh.max_payload_bytes = {limit:,}"
                )
            data = decode_json(reply_payload.to_bytes(), max_bytes=limit, max_depth=self.config.max_depth)
        except SerializationError as exc:
            raise BridgeError(f"Zenoh bridge: reply to {selector!r} refused: {exc}") from exc
        if not isinstance(data, dict) or "value" not in data:
            raise BridgeError(f"Zenoh bridge: reply to {selector!r} has no 'value'")
        return data["value"]

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
                if self.running:
                    self._report(f"zenoh bridge: request {request.request_key!r}", str(exc))
                continue
            except Exception as exc:  # noqa: BLE001 - the worker never dies on one request
                self._report(f"zenoh bridge: request {request.request_key!r}", f"{type(exc).__name__}: {exc}")
                continue
            self.blackboard.reply_to(request, value)

    def _report(self, where: str, error: str) -> None:
        log.warning("%s: %s", where, error)
        self._publish_local(ErrorEvent(source="zenoh", where=where, error=error))


_HINTS = {
    "oversized": " (bridges.zenoh.max_payload_bytes; raise it on this robot if such events are expected)",
    "too_deep": " (bridges.zenoh.max_depth)",
    "invalid": "; the sender must send Event.to_dict() envelopes of a matching edgevox version",
}
