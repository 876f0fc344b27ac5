"""Explicit lifecycles and stop reports shared by the runtime objects.

:class:`Lifecycle` is a tiny, thread-safe state machine: an enum of states plus
a table of legal transitions. An illegal transition raises
:class:`~edgevox.errors.LifecycleError` naming the object, the current state,
what was attempted and what to do instead - so "start twice" or "use after
stop" fail loudly instead of half-working.

:class:`StopReport` is what every ``stop(timeout_s)`` in the runtime returns:
``clean`` plus the names of threads (or agents) it had to abandon because they
did not finish in time. It is truthy exactly when the stop was clean, so
``assert runtime.stop(2.0)`` reads naturally.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Generic, TypeVar

from edgevox.errors import LifecycleError

S = TypeVar("S", bound=Enum)


class Lifecycle(Generic[S]):
    """Current state + legal transitions, guarded by a lock.

    ``transitions`` maps each state to the states it may move to. ``hints`` maps a
    state to a sentence appended to the error when leaving it is illegal (the fix).
    """

    def __init__(
        self,
        owner: str,
        initial: S,
        transitions: Mapping[S, Iterable[S]],
        hints: Mapping[S, str] | None = None,
    ) -> None:
        self.owner = owner
        self._state = initial
        self._transitions = {k: frozenset(v) for k, v in transitions.items()}
        self._hints = dict(hints or {})
        self._lock = threading.Lock()

    @property
    def state(self) -> S:
        return self._state

    def can(self, target: S) -> bool:
        return target in self._transitions.get(self._state, ())

    def to(self, target: S, action: str = "") -> S:
        """Move to ``target`` or raise LifecycleError. Returns the previous state."""
        with self._lock:
            current = self._state
            if target not in self._transitions.get(current, ()):
                what = action or f"move to {target.name}"
                hint = self._hints.get(current, "")
                raise LifecycleError(
                    f"{self.owner}: cannot {what} while {current.name}" + (f"; {hint}" if hint else "")
                )
            self._state = target
            return current

    def to_if(self, target: S, *allowed_from: S) -> bool:
        """Move to ``target`` only if the current state is one of ``allowed_from``; no error."""
        with self._lock:
            if self._state in allowed_from and target in self._transitions.get(self._state, ()):
                self._state = target
                return True
            return False

    def force(self, target: S) -> None:
        """Set the state unconditionally (only for terminal bookkeeping, e.g. FAILED)."""
        with self._lock:
            self._state = target

    def __repr__(self) -> str:
        return f"Lifecycle({self.owner!r}, {self._state.name})"


@dataclass
class StopReport:
    """Result of a ``stop(timeout_s)``: truthy when clean.

    ``abandoned`` names the threads or agents that were still running at the deadline
    (they are daemon threads, told to cancel, and left behind). ``discarded`` counts
    queued work items that were failed on purpose instead of run.
    """

    clean: bool = True
    abandoned: list[str] = field(default_factory=list)
    discarded: int = 0

    def __bool__(self) -> bool:
        return self.clean

    @classmethod
    def merge(cls, reports: Iterable[StopReport]) -> StopReport:
        out = cls()
        for r in reports:
            out.clean = out.clean and r.clean
            out.abandoned.extend(r.abandoned)
            out.discarded += r.discarded
        return out

    @classmethod
    def abandoned_threads(cls, names: Iterable[str]) -> StopReport:
        names = list(names)
        return cls(clean=not names, abandoned=names)
