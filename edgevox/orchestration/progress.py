"""Heartbeats and the overall deadline of one Coordinator turn, on one shared timer wheel.

A long orchestration turn (a strategy, or an agent the router chose) must not look dead:
:class:`TurnWatch` publishes an :class:`~edgevox.orchestration.events.OrchestrationProgress`
event every ``interval_s`` while the turn runs (strategy, agent steps started, the agent
running now, seconds elapsed), says ``still_working`` once (through the coordinator's
delivery, so it is spoken when the user is not talking), and when the turn's overall
``timeout_s`` passes cancels the turn's own token so the coordinator can answer with what
was finished (:func:`degraded_answer`) instead of nothing.

Every watch runs on the coordinator's one :class:`~edgevox.runtime.timers.TimerWheel`
(one thread for all sessions, started on first use; none per turn). Tests inject a wheel
with a fake clock and ``start_thread=False`` and call ``run_due()`` to move time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from edgevox.agents.base import Agent, AgentResult
from edgevox.agents.events import ReplyDelta
from edgevox.agents.run import child_name, stream_child
from edgevox.errors import Cancelled
from edgevox.orchestration.events import OrchestrationProgress, OrchestrationTimedOut
from edgevox.orchestration.strategies.base import Orchestration, RunProgress
from edgevox.runtime.context import AgentContext, CancelToken
from edgevox.runtime.events import Event
from edgevox.runtime.timers import TimerHandle, TimerWheel

if TYPE_CHECKING:
    from edgevox.orchestration.coordinator import Coordinator

Turn = Generator[Event, None, AgentResult]


class TurnWatch:
    """Heartbeat and deadline of one turn. ``start()`` arms them, ``stop()`` disarms (idempotent)."""

    def __init__(
        self,
        wheel: TimerWheel,
        *,
        session_id: str,
        strategy: str,
        token: CancelToken,
        publish: Callable[[Event], None],
        interval_s: float | None = None,
        timeout_s: float | None = None,
        still_working: str = "",
        say: Callable[[str], None] | None = None,
        progress: Callable[[], RunProgress | None] = lambda: None,
        agent: str = "",
    ) -> None:
        self.wheel = wheel
        self.session_id, self.strategy, self.agent = session_id, strategy, agent
        self.token = token
        self.publish = publish
        self.interval_s, self.timeout_s = interval_s, timeout_s
        self.still_working, self.say = still_working, say
        self.progress = progress
        self.beats = 0
        self.timed_out = False
        self.started = 0.0
        self._handles: list[TimerHandle] = []
        self._lock = threading.Lock()
        self._stopped = False

    def elapsed_s(self) -> float:
        return max(0.0, self.wheel.clock() - self.started)

    def start(self) -> TurnWatch:
        self.started = self.wheel.clock()
        with self._lock:
            if self.interval_s is not None:
                self._handles.append(self.wheel.call_later(self.interval_s, self._beat))
            if self.timeout_s is not None:
                self._handles.append(self.wheel.call_later(self.timeout_s, self._expire))
        return self

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            for handle in self._handles:
                handle.cancel()
            self._handles.clear()

    def _beat(self) -> None:
        with self._lock:
            if self._stopped:
                return
            self.beats += 1
            beat = self.beats
            assert self.interval_s is not None  # only armed with an interval
            self._handles.append(self.wheel.call_later(self.interval_s, self._beat))
        run = self.progress()
        step, agent = run.snapshot() if run is not None else (1, self.agent)
        self.publish(
            OrchestrationProgress(
                source=self.strategy,
                session_id=self.session_id,
                strategy=self.strategy,
                step=step,
                agent=agent or self.agent,
                elapsed_s=round(self.elapsed_s(), 3),
                beat=beat,
            )
        )
        if beat == 1 and self.still_working and self.say is not None:
            self.say(self.still_working)

    def _expire(self) -> None:
        with self._lock:
            if self._stopped:
                return
            self.timed_out = True
        self.token.cancel(f"timed out after {self.timeout_s:g} s")


def degraded_answer(
    strategy: str, run: RunProgress | None, partial_text: str, timeout_s: float
) -> tuple[str, list[str], list[str]]:
    """What the user hears when an orchestration turn timed out: the finished agents' answers
    and the agents that did not finish. Returns (text, finished agents, unfinished agents)."""
    finished = run.finished_steps() if run is not None else []
    unfinished = run.unfinished_agents() if run is not None else [strategy]
    names = ", ".join(unfinished) or strategy
    have = [f"{s.agent}: {s.text.strip()}" for s in finished]
    if not have and partial_text.strip():
        have = [partial_text.strip()]
    lead = f"I ran out of time after {timeout_s:g} seconds"
    if have:
        text = f"{lead}; here is what I have so far. " + " ".join(have) + f" Not finished: {names}."
    else:
        text = (
            f"{lead} before anything was finished ({names} did not finish). Please try again or ask something simpler."
        )
    return text, [s.agent for s in finished], unfinished


def run_strategy(coord: Coordinator, strategy: Agent, text: str, ctx: AgentContext) -> Turn:
    """A strategy's turn; at the overall timeout, what its finished agents said."""
    name = child_name(strategy)
    progress = strategy.progress if isinstance(strategy, Orchestration) else None
    outcome = yield from watched(coord, strategy, text, ctx, label=name, progress=progress)
    if not outcome.timed_out:
        return outcome
    run = progress(ctx.session_id) if progress is not None else None
    assert coord.timeout_s is not None  # only a deadline times a strategy out here
    reply, finished, unfinished = degraded_answer(name, run, outcome.text, coord.timeout_s)
    coord.publish(
        OrchestrationTimedOut(
            source=name,
            session_id=ctx.session_id,
            strategy=name,
            finished=finished,
            unfinished=unfinished,
            elapsed_s=round(outcome.duration_s, 3),
        )
    )
    yield ReplyDelta(agent=name, text=reply)
    return replace(outcome, text=reply, agent=name, data={**outcome.data, "degraded": True})


def watched(
    coord: Coordinator,
    agent: Agent,
    task: str,
    ctx: AgentContext,
    *,
    label: str,
    progress: Callable[[str], RunProgress | None] | None = None,
    strategy: str = "",
    **child_fields: Any,
) -> Turn:
    """Run ``agent`` (called ``label``) for this turn with the heartbeat and overall deadline (if
    configured); heartbeats name ``strategy`` (default ``label``: the strategy itself)."""
    if coord.timeout_s is None and coord.progress_interval_s is None:
        return (yield from stream_child(agent, task, ctx, **child_fields))
    session = ctx.session_id
    run_ctx = ctx.child()  # its own token: the deadline cancels this turn, never the caller

    def runs() -> RunProgress | None:
        return progress(session) if progress is not None else None

    watch = TurnWatch(
        coord.timer_wheel(),
        session_id=session,
        strategy=strategy or label,
        token=run_ctx.cancel_token,
        publish=coord.publish,
        interval_s=coord.progress_interval_s,
        timeout_s=coord.timeout_s,
        still_working=coord.still_working,
        say=coord.say_later(session, label),
        progress=runs,
        agent=label,
    ).start()
    parts: list[str] = []
    gen = stream_child(agent, task, run_ctx, **child_fields)
    try:
        while True:
            try:
                event = next(gen)
            except StopIteration as stop:
                result: AgentResult = stop.value
                return result
            if isinstance(event, ReplyDelta):
                parts.append(event.text)
            yield event
    except Cancelled:
        if not watch.timed_out or ctx.cancelled:
            raise
        return AgentResult(
            "".join(parts),
            agent=label,
            ok=False,
            timed_out=True,
            error=f"{label}: timed out after {coord.timeout_s:g} s",
            duration_s=watch.elapsed_s(),
        )
    finally:
        gen.close()
        watch.stop()
        run_ctx.cancel_token.detach()
