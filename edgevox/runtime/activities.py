"""Activities: the one place that knows everything running on the robot's behalf.

A safety stop must reach *everything* that acts: a skill started three turns ago, a
tool call stuck in a driver, an LLM generation, a background agent's run, an
orchestration worker. Each of those registers an :class:`Activity` here when it
starts and finishes it when it ends - with the :class:`~edgevox.runtime.runtime.Runtime`
(``runtime.activities``, reached through ``ctx.activities``), never with the turn
that started it, because a turn ends long before the skill it started does.

:meth:`ActivityRegistry.cancel_all` is the stop: it marks every running activity
*stale* (its late result must be discarded), cancels it (its token, or the custom
``cancel`` it registered, e.g. ``GoalHandle.cancel``), then waits up to ``grace_s``
for them to end. Whatever is still running after the grace is reported by name in
:attr:`CancelReport.ignored`; it stays registered until its thread really ends, so a
later stop or ``Runtime.stop()`` reports it again instead of forgetting it.

Contract for the code that registers (tools, skills, workers)::

    with track(ctx, "tool", "move", token) as activity:
        value = work()
    if activity.stale:          # cancelled by a stop while it ran:
        discard(value)          # never speak or act on a late result

Rejected alternative: walking the cancel-token tree from a root token. Tokens are
detached when the turn that made them ends (so parents do not grow), which is
exactly how a skill outlived the turn and escaped the stop; a flat registry keyed
by what runs, not by who started it, cannot lose anything that way.

Thread-safe; every method may be called from any thread.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from edgevox.runtime.context import AgentContext, CancelToken
from edgevox.runtime.limits import wait_s

KINDS = ("skill", "tool", "generation", "turn", "background", "worker")
"""What can be registered: a skill goal, a tool call, an LLM generation, a voice turn, a
background agent's run, an orchestration worker thread."""

SAFETY_STOP_REASON = "safety stop"
"""The cancel reason of every safety stop, whatever its source (a turn cancelled by it ends ``stopped``)."""

STOP_GRACE_S = 0.1
"""How long a stop waits for cancelled work to end before naming it as ignoring the cancel."""


@dataclass(eq=False)
class Activity:
    """One running thing. Created by :meth:`ActivityRegistry.start`; ended by :meth:`finish`."""

    id: int
    kind: str
    name: str
    token: CancelToken
    cancel_fn: Callable[[str], object] | None = None
    started_at: float = field(default_factory=time.monotonic)
    thread: str = field(default_factory=lambda: threading.current_thread().name)
    stale: bool = False
    """Set by a stop: whatever this activity returns from now on is discarded."""
    _done: threading.Event = field(default_factory=threading.Event, repr=False)
    _registry: ActivityRegistry | None = field(default=None, repr=False)

    @property
    def label(self) -> str:
        """``"skill go_to"``: how reports name it."""
        return f"{self.kind} {self.name}"

    @property
    def done(self) -> bool:
        return self._done.is_set()

    def cancel(self, reason: str) -> None:
        self.stale = True
        fn = self.cancel_fn or self.token.cancel
        try:
            fn(reason)
        finally:
            if self.cancel_fn is not None:
                self.token.cancel(reason)

    def finish(self) -> None:
        """The work ended (idempotent)."""
        if self._done.is_set():
            return
        self._done.set()
        if self._registry is not None:
            self._registry._forget(self)

    def wait(self, timeout_s: float) -> bool:
        return self._done.wait(wait_s("timeout_s", timeout_s, owner=f"activity {self.label!r}.wait"))


@dataclass
class CancelReport:
    """What :meth:`ActivityRegistry.cancel_all` did."""

    cancelled: list[str] = field(default_factory=list)
    """Labels (``"skill go_to"``) of everything that was running and got the cancel."""
    ignored: list[str] = field(default_factory=list)
    """Labels of what was still running ``grace_s`` after the cancel (it ignores cancellation)."""
    cancel_s: float = 0.0
    """Seconds from the call to every cancel having been issued."""
    settle_s: float = 0.0
    """Seconds from the call until everything ended (or the grace ran out)."""
    started_at: float = field(default_factory=time.monotonic, repr=False)
    activities: list[Activity] = field(default_factory=list, repr=False)

    def settle(self, grace_s: float) -> CancelReport:
        """Wait until every cancelled activity ended or ``grace_s`` passed since the cancel;
        fill :attr:`ignored` and :attr:`settle_s`. Returns self."""
        deadline = self.started_at + wait_s("grace_s", grace_s, owner="CancelReport.settle")
        for activity in self.activities:
            activity.wait(deadline - time.monotonic())
        self.ignored = [a.label for a in self.activities if not a.done]
        self.settle_s = time.monotonic() - self.started_at
        return self


class ActivityRegistry:
    """Registry of running activities (see the module docstring)."""

    def __init__(self, name: str = "edgevox") -> None:
        self.name = name
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._running: dict[int, Activity] = {}

    def start(
        self, kind: str, name: str, token: CancelToken | None = None, *, cancel: Callable[[str], object] | None = None
    ) -> Activity:
        """Register running work; call :meth:`Activity.finish` when it ends (or use :meth:`track`).

        ``token`` is cancelled by a stop (a fresh one is made if None: poll ``activity.token``);
        ``cancel`` is called instead when the work has its own cancel (``GoalHandle.cancel``).
        """
        if kind not in KINDS:
            raise ValueError(f"activity kind {kind!r}: must be one of {', '.join(KINDS)}")
        activity = Activity(next(self._ids), kind, name, token or CancelToken(f"{kind}:{name}"), cancel)
        activity._registry = self
        with self._lock:
            self._running[activity.id] = activity
        return activity

    @contextmanager
    def track(
        self, kind: str, name: str, token: CancelToken | None = None, *, cancel: Callable[[str], object] | None = None
    ) -> Iterator[Activity]:
        activity = self.start(kind, name, token, cancel=cancel)
        try:
            yield activity
        finally:
            activity.finish()

    def _forget(self, activity: Activity) -> None:
        with self._lock:
            self._running.pop(activity.id, None)

    def running(self, *kinds: str) -> list[Activity]:
        """Activities running now (of ``kinds``, or all), oldest first."""
        with self._lock:
            items = list(self._running.values())
        return [a for a in items if not kinds or a.kind in kinds]

    def cancel_all(self, reason: str, *, grace_s: float = STOP_GRACE_S) -> CancelReport:
        """Cancel everything running; wait up to ``grace_s`` for it to end; report (see module doc)."""
        report = CancelReport()
        report.activities = self.running()
        for activity in report.activities:
            try:
                activity.cancel(reason)
            except Exception:  # noqa: BLE001 - one failing cancel must not keep the others running
                pass
            report.cancelled.append(activity.label)
        report.cancel_s = time.monotonic() - report.started_at
        return report.settle(grace_s)

    def __len__(self) -> int:
        with self._lock:
            return len(self._running)

    def __bool__(self) -> bool:
        return True  # a registry is never "false" because nothing runs right now

    def __repr__(self) -> str:
        return f"ActivityRegistry({self.name!r}, running={[a.label for a in self.running()]})"


def start_activity(
    ctx: AgentContext | None,
    kind: str,
    name: str,
    token: CancelToken | None = None,
    *,
    cancel: Callable[[str], object] | None = None,
) -> Activity:
    """:meth:`ActivityRegistry.start` on ``ctx.activities``; without a registry, an unregistered
    activity (same interface) so callers need no branch."""
    registry = ctx.activities if ctx is not None else None
    if registry is None:
        return Activity(0, kind, name, token or CancelToken(f"{kind}:{name}"), cancel)
    return registry.start(kind, name, token, cancel=cancel)


@contextmanager
def track(
    ctx: AgentContext | None,
    kind: str,
    name: str,
    token: CancelToken | None = None,
    *,
    cancel: Callable[[str], object] | None = None,
) -> Iterator[Activity]:
    """Register for the duration of a ``with`` block (see :func:`start_activity`)."""
    activity = start_activity(ctx, kind, name, token, cancel=cancel)
    try:
        yield activity
    finally:
        activity.finish()
