"""Who is out there: the peers a Zenoh bridge hears, their namespaces, and the goals they run.

A bridge hears the bridges of the namespaces it listens on (``ZenohBridge.heard``): its own;
with ``fleet`` set (a robot), the fleet namespace above it, where its operator lives; with
``robots`` set (an operator), every robot namespace under its own. One Zenoh session and one
set of threads serve them all, so an operator reaching 8 robots has the threads it has for 1.

The :class:`PeerRoster` is fed from Zenoh's threads (liveliness tokens, received samples) and
read from any thread. It keeps, per peer bridge id:

* its namespace (from the key of its liveliness token), when it joined, and whether it left;
* when it was last heard (a sample, an acknowledgement or its token), for the operator's
  inventory (:meth:`PeerRoster.inventory`, ``ZenohBridge.robots()``);
* the skill goals it reported as started and not ended (``agent.skill_state`` events). When
  the peer leaves (its process died, or its link was silent for the lease) those goals can
  never report an end, so the bridge publishes each once more as ``lost``: the starter always
  reads a final state.

Bounded: at most :data:`MAX_PEERS` present and the last 64 gone; at most
:data:`MAX_GOALS_PER_PEER` open goals per peer (the oldest are forgotten first).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

from edgevox.agents.events import SkillStateEvent
from edgevox.integrations.config import BRIDGE_ID

MAX_PEERS = 1024
MAX_GONE = 64
MAX_GOALS_PER_PEER = 256
OPEN_GOAL_STATES = frozenset({"pending", "running"})
"""``agent.skill_state`` states of a goal that has not ended."""


@dataclass(frozen=True)
class FleetPeer:
    """One peer bridge as the roster knows it (a snapshot)."""

    bridge_id: str
    namespace: str
    present: bool
    joined_at: float
    """``time.monotonic()`` when its liveliness token appeared."""
    last_heard_at: float
    """``time.monotonic()`` of the last thing received from it (its token counts)."""
    left_at: float | None = None
    goals: tuple[str, ...] = ()
    """Goals it reported started and not ended, as ``skill:goal_id``."""

    def describe(self, now: float | None = None) -> str:
        now = time.monotonic() if now is None else now
        state = "present" if self.present else f"left {now - (self.left_at or now):.1f} s ago"
        goals = f", running {', '.join(self.goals)}" if self.goals else ""
        return f"{self.bridge_id} ({self.namespace}): {state}, last heard {now - self.last_heard_at:.1f} s ago{goals}"


@dataclass
class _Peer:
    namespace: str
    joined_at: float
    last_heard_at: float
    left_at: float | None = None
    goals: OrderedDict[str, str] = field(default_factory=OrderedDict)
    """goal_id -> skill name, for goals not ended."""


class PeerRoster:
    """The peers of one bridge (see the module docstring). Thread-safe."""

    def __init__(self, own_id: str) -> None:
        self.own_id = own_id
        self._peers: dict[str, _Peer] = {}
        self._gone: OrderedDict[str, _Peer] = OrderedDict()
        self._cond = threading.Condition()

    # -- liveliness ------------------------------------------------------------------------

    def join(self, peer: str, namespace: str, now: float) -> bool | None:
        """A token appeared. True: a new peer; False: refused (bad id or over :data:`MAX_PEERS`);
        None: already present (a second token of the same id, e.g. heard on two namespaces)."""
        with self._cond:
            if peer in self._peers:
                return None
            if not BRIDGE_ID.match(peer) or len(self._peers) >= MAX_PEERS:
                return False
            self._gone.pop(peer, None)
            self._peers[peer] = _Peer(namespace, now, now)
            self._cond.notify_all()
            return True

    def leave(self, peer: str, now: float) -> list[tuple[str, str]] | None:
        """A token went away. Returns the peer's open goals as ``(skill, goal_id)`` (forgotten
        now: the caller reports them ``lost``), or None when the peer was not present."""
        with self._cond:
            state = self._peers.pop(peer, None)
            if state is None:
                return None
            state.left_at = now
            goals = [(skill, goal_id) for goal_id, skill in state.goals.items()]
            state.goals.clear()
            self._gone[peer] = state
            while len(self._gone) > MAX_GONE:
                self._gone.popitem(last=False)
            self._cond.notify_all()
            return goals

    # -- what peers say ------------------------------------------------------------------------

    def heard(self, peer: str, now: float, event: object = None) -> None:
        """Something arrived from ``peer``; a :class:`SkillStateEvent` opens or ends one of its goals."""
        with self._cond:
            state = self._peers.get(peer)
            if state is None:
                return  # a sample that overtook its sender's token, or from a peer that left
            state.last_heard_at = now
            if not isinstance(event, SkillStateEvent) or not event.goal_id:
                return
            if event.state in OPEN_GOAL_STATES:
                state.goals[event.goal_id] = event.skill
                state.goals.move_to_end(event.goal_id)
                while len(state.goals) > MAX_GOALS_PER_PEER:
                    state.goals.popitem(last=False)
            else:
                state.goals.pop(event.goal_id, None)

    # -- reading ----------------------------------------------------------------------------------

    @property
    def present(self) -> set[str]:
        with self._cond:
            return set(self._peers)

    def speaks_for(self, peer: str, namespace: str) -> bool:
        """May a sample put in ``namespace`` name ``peer`` as its sender? Yes when ``peer``'s token
        lives in that namespace or above it (an operator puts in its robots' namespaces too), or
        when no bridge of that id is known (a plain Zenoh session has no token to compare)."""
        with self._cond:
            state = self._peers.get(peer) or self._gone.get(peer)
            home = state.namespace if state is not None else None
        return home is None or namespace == home or namespace.startswith(home + "/")

    def homes(self, peers: set[str]) -> dict[str, str]:
        """Peer id -> the namespace its token lives (or lived) in, for those of ``peers`` known."""
        with self._cond:
            found = {p: self._peers.get(p) or self._gone.get(p) for p in peers}
        return {p: state.namespace for p, state in found.items() if state is not None}

    def targets(self, namespace: str | None = None) -> tuple[set[str], set[str]]:
        """(peers present, peers that left): who a stop sent now must reach; with ``namespace``,
        only those whose token lives there."""
        with self._cond:
            present = {p for p, state in self._peers.items() if namespace in (None, state.namespace)}
            gone = {p for p, state in self._gone.items() if namespace in (None, state.namespace)}
            return present, gone - set(self._peers)

    def wait_for(self, count: int, timeout_s: float) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: len(self._peers) >= count, timeout_s)

    def inventory(self) -> list[FleetPeer]:
        """Every peer present and the last ones that left, sorted by namespace then id."""
        with self._cond:
            rows = [(peer, state, True) for peer, state in self._peers.items()]
            rows += [(peer, state, False) for peer, state in self._gone.items() if peer not in self._peers]
            peers = [
                FleetPeer(
                    bridge_id=peer,
                    namespace=state.namespace,
                    present=present,
                    joined_at=state.joined_at,
                    last_heard_at=state.last_heard_at,
                    left_at=state.left_at,
                    goals=tuple(f"{skill}:{goal_id}" for goal_id, skill in state.goals.items()),
                )
                for peer, state, present in rows
            ]
        return sorted(peers, key=lambda p: (p.namespace, p.bridge_id))
