"""What became of one stop sent to the robots: :class:`StopDelivery`.

The control lane (``zenoh_control.py``) makes one per stop it sends: the peers expected to
acknowledge it (every robot present, and those seen before that left), when each one did and
what it said it cancelled, and who left. Its statuses, per robot: ``stopped`` (acknowledged by
the deadline), ``late`` (after it), ``unreachable`` (left, or silent at the deadline), ``pending``
(before the deadline). :meth:`ZenohBridge.safety_stop` returns it; its :meth:`StopDelivery.event`
is the ``bridge.stop_delivery`` report on the bus.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from edgevox.integrations.events import StopDeliveryEvent

STATUSES = ("stopped", "late", "unreachable", "pending")
"""A peer's status in a :class:`StopDelivery`."""


@dataclass(eq=False)
class StopDelivery:
    """One stop sent to the peers of a namespace, and who acknowledged it (thread-safe reads).

    ``peers`` maps each expected peer's bridge id to ``stopped``, ``late``, ``unreachable`` or
    ``pending`` (before the deadline); ``cancelled`` what each peer said it cancelled.
    """

    stop_id: str
    reason: str
    expected: frozenset[str]
    sent_at: float
    deadline_at: float
    acked_at: dict[str, float] = field(default_factory=dict)
    cancelled: dict[str, list[str]] = field(default_factory=dict)
    left: set[str] = field(default_factory=set)
    namespace: str = ""
    """Where it was put: "" for the bridge's own namespace (every peer heard there), else one
    robot's namespace (:meth:`ZenohBridge.safety_stop` with ``namespace``)."""
    reported: bool = False
    _cond: threading.Condition = field(default_factory=threading.Condition, repr=False)

    def ack(self, peer: str, cancelled: list[str], now: float) -> bool:
        """Record a peer's acknowledgement; True if it is the first from that peer."""
        with self._cond:
            if peer in self.acked_at or peer not in self.expected:
                return False
            self.acked_at[peer] = now
            self.cancelled[peer] = cancelled
            self._cond.notify_all()
            return True

    def peer_left(self, peer: str) -> None:
        with self._cond:
            if peer in self.expected and peer not in self.acked_at:
                self.left.add(peer)
                self._cond.notify_all()

    def status(self, peer: str, now: float | None = None) -> str:
        now = time.monotonic() if now is None else now
        with self._cond:
            at = self.acked_at.get(peer)
            if at is not None:
                return "stopped" if at <= self.deadline_at else "late"
            return "unreachable" if peer in self.left or now >= self.deadline_at else "pending"

    @property
    def peers(self) -> dict[str, str]:
        now = time.monotonic()
        return {peer: self.status(peer, now) for peer in sorted(self.expected)}

    @property
    def waiting(self) -> set[str]:
        """Peers that have neither acknowledged nor left."""
        with self._cond:
            return set(self.expected) - set(self.acked_at) - self.left

    @property
    def unacknowledged(self) -> set[str]:
        """Peers that have not acknowledged, also those that left (they may come back: still retried)."""
        with self._cond:
            return set(self.expected) - set(self.acked_at)

    @property
    def delivered(self) -> bool:
        """Every expected peer acknowledged in time (True with no peers: nobody to stop)."""
        return all(status == "stopped" for status in self.peers.values())

    def latency_s(self, peer: str) -> float | None:
        """Seconds from the first send to ``peer``'s acknowledgement (None: not acknowledged)."""
        with self._cond:
            at = self.acked_at.get(peer)
        return None if at is None else at - self.sent_at

    def wait(self, timeout_s: float) -> bool:
        """Block until every peer acknowledged or left, or ``timeout_s`` passed; True if none waits."""
        with self._cond:
            return self._cond.wait_for(lambda: not (set(self.expected) - set(self.acked_at) - self.left), timeout_s)

    def event(self, source: str) -> StopDeliveryEvent:
        peers = self.peers
        return StopDeliveryEvent(
            source=source,
            stop_id=self.stop_id,
            reason=self.reason,
            stopped=[p for p, s in peers.items() if s == "stopped"],
            late=[p for p, s in peers.items() if s == "late"],
            unreachable=[p for p, s in peers.items() if s in ("unreachable", "pending")],
            cancelled={p: list(c) for p, c in self.cancelled.items()},
        )

    def describe(self) -> str:
        peers = self.peers
        if not peers:
            return f"stop {self.stop_id}: no robot in the namespace to stop"
        parts = []
        for peer, status in peers.items():
            took = self.latency_s(peer)
            parts.append(f"{peer} {status}" + (f" ({took * 1000:.0f} ms)" if took is not None else ""))
        return f"stop {self.stop_id}: " + ", ".join(parts)
