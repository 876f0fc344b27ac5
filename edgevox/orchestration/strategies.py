"""Orchestration strategies: several agents answering as one.

(About 480 lines on purpose: the four strategies are short variations on one base and read
best side by side; each is under 150 lines.)

Every strategy is an :class:`Orchestration`, a :class:`~edgevox.orchestration.workflows.Workflow`
with a timeout and a session store: it satisfies the one agent contract (``name``,
``stream``, ``run``) and can be used wherever an agent can (the voice loop, a
workflow, another strategy). Its answer is an :class:`~edgevox.agents.base.AgentResult`
whose ``agent`` is the agent that spoke, ``steps`` every child run, and ``data`` the
strategy's facts (``approved``, ``iteration``, ``missing``, ``handles``). Custom
strategies subclass :class:`Orchestration` and implement ``_run(task, ctx)`` (a
generator returning the result), calling agents through :meth:`Orchestration.call`
and :meth:`Orchestration.stream_call` (both :func:`~edgevox.agents.run.run_child`).

* :class:`Pipeline` - agents in order; each receives the user request and the
  previous agent's answer. Cancelling mid-way keeps the finished steps under the
  session id; :meth:`Pipeline.resume` continues from the next step.
* :class:`Swarm` - one agent answers; with ``handoff_conversation`` it may pass
  the turn to a peer, who answers the same request with the summary as context.
  The swarm remembers per session who holds the conversation.
* :class:`Supervisor` - the orchestrator pattern: a supervisor agent
  (optionally refining the task) has workers do the work, sequentially or in
  parallel, and answers itself from their results. A worker that fails or times
  out does not sink the answer: the supervisor answers with what it has and the
  reply says which worker is missing. ``async_delivery`` answers at once and
  delivers the final answer later through a delivery strategy.
* :class:`Loop` - a writer and reviewers: a reviewer approves with "APPROVED";
  otherwise its feedback goes into the next draft, up to ``max_iterations``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Generator, Mapping, Sequence
from typing import Literal

from edgevox.agents.base import CONTEXT_PREFIX, Agent, AgentResult
from edgevox.agents.events import ReplyDelta
from edgevox.agents.run import child_name, drain, run_child, stream_child
from edgevox.errors import Cancelled
from edgevox.orchestration.delegation import (
    ACTIVE,
    CANCELLED,
    COMPLETED,
    FAILED,
    DelegationHandle,
    Delegator,
)
from edgevox.orchestration.delivery import DeliveryStrategy
from edgevox.orchestration.events import WorkflowSuspended
from edgevox.orchestration.handoff import HandoffHandler
from edgevox.orchestration.state import SessionStore
from edgevox.orchestration.workflows import Run, Workflow
from edgevox.runtime.activities import track
from edgevox.runtime.context import AgentContext
from edgevox.runtime.events import Event

APPROVED = "APPROVED"


class Orchestration(Workflow):
    """Base class of strategies (and of custom ones). Thread-safe if its agents are."""

    name: str = "orchestration"

    def __init__(
        self, *, name: str | None = None, timeout_s: float | None = None, store: SessionStore | None = None
    ) -> None:
        if name:
            self.name = name
        self.timeout_s = timeout_s
        self._store = store or SessionStore()

    def call(self, agent: Agent, task: str, ctx: AgentContext, **child_fields: object) -> AgentResult:
        """Run one agent (child context, this strategy's timeout). Raises only ``Cancelled``."""
        return run_child(agent, task, ctx, timeout_s=self.timeout_s, **child_fields)

    def stream_call(
        self, agent: Agent, task: str, ctx: AgentContext, **child_fields: object
    ) -> Generator[Event, None, AgentResult]:
        """:meth:`call` for the agent whose reply is the answer: yields its events as it runs
        (``result = yield from self.stream_call(...)``), so the reply can be spoken at once."""
        return stream_child(agent, task, ctx, timeout_s=self.timeout_s, **child_fields)

    def store_for(self, ctx: AgentContext) -> SessionStore:
        """Where per-session records live: the context's blackboard, else this strategy's own store."""
        return SessionStore(ctx.blackboard) if ctx.blackboard is not None else self._store


def _check_agents(kind: str, agents: Sequence[Agent]) -> list[Agent]:
    if not agents:
        raise ValueError(f"{kind} needs at least one agent")
    names = [child_name(a) for a in agents]
    if len(set(names)) != len(names):
        raise ValueError(f"{kind}: agent names must be unique, got {names}")
    return list(agents)


class Pipeline(Orchestration):
    """Agents in order; the last answer is the reply."""

    name = "pipeline"

    def __init__(self, agents: Sequence[Agent], **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]  # Orchestration's keyword options, checked by its signature
        self.agents = _check_agents("Pipeline", agents)

    def _record(self) -> str:
        return f"workflow/{self.name}"

    def _run(self, task: str, ctx: AgentContext) -> Run:
        """Earlier stages run to the end; the last stage's reply streams as it is generated."""
        return self._run_from(task, ctx, [])

    def resume(self, ctx: AgentContext) -> AgentResult | None:
        """Continue the session's cancelled run from the next step (None if none is kept)."""
        record = self.store_for(ctx).get_record(ctx.session_id, self._record())
        if record is None:
            return None
        done = [AgentResult(agent=s["agent"], text=s["text"]) for s in record["completed"]]
        return drain(self._run_from(record["task"], ctx, done))

    def suspended(self, ctx: AgentContext) -> dict[str, object] | None:
        return self.store_for(ctx).get_record(ctx.session_id, self._record())

    def _run_from(self, task: str, ctx: AgentContext, done: list[AgentResult]) -> Run:
        store = self.store_for(ctx)
        steps = list(done)
        last = self.agents[-1]
        for agent in self.agents[len(done) :]:
            step_task = task if not steps else f"User request: {task}\n{steps[-1].agent} said: {steps[-1].text}"
            try:
                if agent is last:
                    outcome = yield from self.stream_call(agent, step_task, ctx)
                else:
                    outcome = self.call(agent, step_task, ctx)
            except Cancelled as exc:
                record = {"task": task, "completed": [{"agent": s.agent, "text": s.text} for s in steps]}
                store.put_record(ctx.session_id, self._record(), record)
                ctx.publish(
                    WorkflowSuspended(
                        source=self.name, workflow=self.name, completed_steps=len(steps), reason=exc.reason
                    )
                )
                raise
            steps.append(outcome)
            if not outcome.ok:
                store.put_record(ctx.session_id, self._record(), None)
                if agent is last and outcome.text:
                    answer = outcome.text  # part of the reply was streamed (and maybe spoken)
                else:
                    answer = steps[-2].text if len(steps) > 1 else ""  # the best answer there is
                    if answer:
                        yield ReplyDelta(source=self.name, text=answer)
                return AgentResult(answer, agent=outcome.agent, ok=False, error=outcome.error, steps=steps)
        store.put_record(ctx.session_id, self._record(), None)
        return AgentResult(steps[-1].text, agent=steps[-1].agent, steps=steps)


class Swarm(Orchestration):
    """Peers that hand the turn to each other with ``handoff_conversation``: a same-turn handoff,
    the target answers the same request at once with the handoff's context."""

    name = "swarm"

    def __init__(
        self,
        agents: Sequence[Agent],
        entry: str | None = None,
        *,
        max_handoffs: int = 5,
        aliases: Mapping[str, str] | None = None,
        **kw: object,
    ) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]  # Orchestration's keyword options, checked by its signature
        self.agents = {child_name(a): a for a in _check_agents("Swarm", agents)}
        self.entry = entry or next(iter(self.agents))
        if self.entry not in self.agents:
            raise ValueError(f"Swarm entry {self.entry!r} is not one of {sorted(self.agents)}")
        self.max_handoffs = max_handoffs
        self.aliases = dict(aliases or {})

    def handler(self, ctx: AgentContext) -> HandoffHandler:
        return HandoffHandler(
            self.agents, self.store_for(ctx), aliases=self.aliases, publish=ctx.publish, timing="same_turn"
        )

    def _run(self, task: str, ctx: AgentContext) -> Run:
        """The answering agent's reply streams as it is generated; the words of an agent that
        hands the turn on are held back (spoken only if that ends the turn: a handoff to a
        human, or too many handoffs)."""
        handler = self.handler(ctx)
        store = handler.store
        state = store.state(ctx.session_id)
        current = state.active_agent if state.active_agent in self.agents else self.entry
        steps: list[AgentResult] = []
        held: list[ReplyDelta] = []
        for _hop in range(self.max_handoffs + 1):
            handler.begin_turn(ctx.session_id)
            state = store.update(
                ctx.session_id,
                lambda s, c=current: s if s.active_agent == c else s.transition(to_agent=c, reason="swarm"),
            )
            context, state = state.take_context()
            store.save_state(state)
            agent_task = f"{context}\n\nUser: {task}" if context else task
            held = []
            events = self.stream_call(self.agents[current], agent_task, ctx, handoff=handler)
            try:
                while True:
                    try:
                        event = next(events)
                    except StopIteration as stop:
                        outcome = stop.value
                        break
                    if isinstance(event, ReplyDelta) and handler.pending(ctx.session_id) is not None:
                        held.append(event)  # this agent hands the turn on: its words wait
                    else:
                        yield event
            finally:
                events.close()
            steps.append(outcome)
            new_state = handler.commit(ctx.session_id)
            if new_state is None or not outcome.ok or new_state.active_agent is None:
                # No handoff, a failure, or a handoff to a human: these words are the answer.
                yield from held
                return AgentResult(outcome.text, agent=current, ok=outcome.ok, error=outcome.error, steps=steps)
            current = new_state.active_agent
        yield from held
        return AgentResult(
            steps[-1].text,
            agent=steps[-1].agent,
            ok=False,
            error=f"{self.name}: more than {self.max_handoffs} handoffs in one turn",
            steps=steps,
        )


class Supervisor(Orchestration):
    """A supervisor agent with workers (the orchestrator pattern).

    ``strategy``: ``"sequential"`` (each worker sees the previous workers' results) or
    ``"parallel"`` (at most ``max_concurrency`` at once). ``auto_delegate=False`` lets the
    supervisor decide itself, with the ``delegate`` tool, instead of always asking every
    worker. ``refine_task`` has the supervisor first rewrite the request for the workers.
    ``async_delivery`` returns an acknowledgement at once and submits the final answer
    to ``delivery`` (a :class:`~edgevox.orchestration.delivery.DeliveryStrategy`) later.
    The result's ``data["missing"]`` lists the workers that failed or timed out;
    ``data["handles"]`` the background handles of an async answer.
    """

    name = "supervisor"

    def __init__(
        self,
        supervisor: Agent,
        workers: Sequence[Agent],
        *,
        strategy: Literal["sequential", "parallel"] = "sequential",
        auto_delegate: bool = True,
        refine_task: bool = False,
        async_delivery: bool = False,
        delivery: DeliveryStrategy | None = None,
        max_concurrency: int = 2,
        max_depth: int = 5,
        acknowledgement: str = "I'm working on it and will tell you when it's done.",
        **kw: object,
    ) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]  # Orchestration's keyword options, checked by its signature
        if strategy not in ("sequential", "parallel"):
            raise ValueError(f"Supervisor strategy {strategy!r}: must be 'sequential' or 'parallel'")
        if async_delivery and delivery is None:
            raise ValueError(
                "Supervisor(async_delivery=True) needs a delivery strategy (Immediate, WaitForIdle, Queued)"
            )
        self.supervisor = supervisor
        self.supervisor_name = child_name(supervisor)
        self.workers = {child_name(w): w for w in _check_agents("Supervisor", workers)}
        self.strategy = strategy
        self.auto_delegate = auto_delegate
        self.refine_task = refine_task
        self.async_delivery = async_delivery
        self.delivery = delivery
        self.acknowledgement = acknowledgement
        self._threads: set[threading.Thread] = set()
        self._threads_lock = threading.Lock()
        self.delegator = Delegator(
            self.workers, max_depth=max_depth, max_concurrency=max_concurrency, timeout_s=self.timeout_s
        )

    def _run(self, task: str, ctx: AgentContext) -> Run:
        """Workers run to the end; the supervisor's own answer streams as it is generated."""
        if not self.async_delivery:
            return (yield from self._answer(task, ctx))
        handle = self._start_async(task, ctx)
        yield ReplyDelta(source=self.name, text=self.acknowledgement)
        return AgentResult(self.acknowledgement, agent=self.name, data={"handles": [handle]})

    def _start_async(self, task: str, ctx: AgentContext) -> DelegationHandle:
        """Answer on a worker thread (``edgevox-supervisor-async``) in a child context (a safety
        stop still cancels it) and submit the answer to the delivery strategy."""
        child = ctx.child()
        handle = DelegationHandle(id=f"{self.name}-async", agent=self.supervisor_name, status=ACTIVE, _ctx=child)
        delivery = self.delivery
        assert delivery is not None  # checked in __init__

        def work() -> None:
            try:
                with track(ctx, "worker", f"{self.name} answer", child.cancel_token) as activity:
                    result = drain(self._answer(task, child))
                if activity.stale or child.cancelled:  # finished after a stop: never delivered
                    raise Cancelled(child.cancel_token.reason or "stopped")
                handle.output, handle.status = result.text, COMPLETED
                delivery.submit(result.text, session_id=ctx.session_id, source=self.name)
            except Cancelled as exc:
                handle.status, handle.error = CANCELLED, exc.reason
            except Exception as exc:  # noqa: BLE001 - reported through the handle and in words
                handle.status, handle.error = FAILED, f"{type(exc).__name__}: {exc}"
                delivery.submit(f"Sorry, I could not finish that: {exc}", session_id=ctx.session_id, source=self.name)
            finally:
                child.cancel_token.detach()
                handle._done.set()
                with self._threads_lock:
                    self._threads.discard(threading.current_thread())

        thread = threading.Thread(target=work, name="edgevox-supervisor-async", daemon=True)
        with self._threads_lock:
            self._threads.add(thread)
        thread.start()
        return handle

    def close(self, timeout_s: float = 2.0) -> list[str]:
        """Wait for async answers and background delegations; names of threads still running."""
        deadline = time.monotonic() + timeout_s
        with self._threads_lock:
            threads = list(self._threads)
        for t in threads:
            t.join(max(0.0, deadline - time.monotonic()))
        left = [t.name for t in threads if t.is_alive()]
        return left + self.delegator.close(max(0.0, deadline - time.monotonic()))

    def _answer(self, task: str, ctx: AgentContext) -> Run:
        steps: list[AgentResult] = []
        sub_task = task
        if self.refine_task:
            refined = self.call(
                self.supervisor, f"Rewrite this request as one clear task for your workers: {task}", ctx
            )
            steps.append(refined)
            if refined.ok and refined.text.strip():
                sub_task = refined.text.strip()
        if not self.auto_delegate:
            workers = ", ".join(self.workers)
            final = yield from self.stream_call(
                self.supervisor, f"{sub_task}\n(You can delegate to: {workers}.)", ctx, delegator=self.delegator
            )
            steps.append(final)
            return AgentResult(final.text, agent=final.agent, ok=final.ok, error=final.error, steps=steps)
        results = self._run_workers(sub_task, ctx)
        missing = [r.agent for r in results if not r.ok]
        lines = [f"- {r.agent}: {r.text}" if r.ok else f"- {r.agent} did not answer ({r.error})" for r in results]
        synthesis = yield from self.stream_call(
            self.supervisor,
            f"User request: {task}\nYour workers reported:\n" + "\n".join(lines) + "\nAnswer the user.",
            ctx,
        )
        steps.append(synthesis)
        text, speaker = synthesis.text, synthesis.agent
        if not synthesis.ok and not text:
            # The supervisor could not answer: the workers' own words are the answer.
            text = "\n".join(f"{r.agent}: {r.text}" for r in results if r.ok)
            speaker = self.name
            if text:
                yield ReplyDelta(source=self.name, text=text)
        if missing:
            # Say so in words the user hears, whatever the model wrote.
            note = f"(I could not get an answer from {', '.join(missing)}, so this may be incomplete.)"
            yield ReplyDelta(source=self.name, text=f" {note}" if text else note)
            text = f"{text} {note}".strip()
        return AgentResult(
            text,
            agent=speaker,
            ok=bool(text),
            error="" if synthesis.ok else synthesis.error,
            steps=steps,
            data={"missing": missing},
        )

    def _run_workers(self, task: str, ctx: AgentContext) -> list[AgentResult]:
        names = list(self.workers)
        if self.strategy == "parallel":
            return self.delegator.delegate_parallel([(n, task) for n in names], ctx)
        results: list[AgentResult] = []
        for n in names:
            earlier = "".join(f"\n{r.agent} found: {r.text}" for r in results if r.ok)
            results.append(self.delegator.delegate(n, task + earlier, ctx))
        return results


class Loop(Orchestration):
    """A writer revised until reviewers approve (``"APPROVED"`` in a review) or ``max_iterations``.

    ``strategy``: ``"all"`` reviewers must approve, ``"any"`` one suffices, ``"majority"``.
    The result's ``data`` has ``approved`` and ``iteration`` (1-based, the one that produced ``text``).
    """

    name = "loop"

    def __init__(
        self,
        agent: Agent,
        reviewers: Sequence[Agent],
        *,
        strategy: Literal["all", "any", "majority"] = "all",
        max_iterations: int = 3,
        **kw: object,
    ) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]  # Orchestration's keyword options, checked by its signature
        if strategy not in ("all", "any", "majority"):
            raise ValueError(f"Loop strategy {strategy!r}: must be 'all', 'any' or 'majority'")
        if max_iterations < 1:
            raise ValueError(f"Loop max_iterations = {max_iterations}: must be >= 1")
        self.agent = agent
        self.reviewers = _check_agents("Loop", reviewers)
        self.strategy = strategy
        self.max_iterations = max_iterations

    def _decide(self, votes: list[bool]) -> bool:
        if self.strategy == "all":
            return all(votes)
        if self.strategy == "any":
            return any(votes)
        return sum(votes) * 2 > len(votes)

    def _run(self, task: str, ctx: AgentContext) -> Run:
        steps: list[AgentResult] = []
        prompt = task
        draft = AgentResult(agent=child_name(self.agent))
        for iteration in range(1, self.max_iterations + 1):
            draft = self.call(self.agent, prompt, ctx)
            steps.append(draft)
            facts = {"approved": False, "iteration": iteration}
            if not draft.ok:
                return AgentResult(draft.text, agent=draft.agent, ok=False, error=draft.error, steps=steps, data=facts)
            reviews = [
                self.call(
                    r,
                    f"Request: {task}\nAnswer: {draft.text}\nReply {APPROVED} if the answer is good; otherwise say what to fix.",
                    ctx,
                )
                for r in self.reviewers
            ]
            steps.extend(reviews)
            votes = [r.ok and APPROVED in r.text.upper() for r in reviews]
            if self._decide(votes):
                yield ReplyDelta(source=draft.agent, text=draft.text)
                return AgentResult(draft.text, agent=draft.agent, steps=steps, data={**facts, "approved": True})
            feedback = "\n".join(
                f"- {r.agent}: {r.text if r.ok else 'no review (' + r.error + ')'}"
                for r, v in zip(reviews, votes, strict=True)
                if not v
            )
            prompt = f"{task}\n\nYour previous answer: {draft.text}\nReviewer feedback:\n{feedback}\nWrite an improved answer."
        if draft.text:
            yield ReplyDelta(source=draft.agent, text=draft.text)
        return AgentResult(
            draft.text, agent=draft.agent, steps=steps, data={"approved": False, "iteration": self.max_iterations}
        )


__all__ = [
    "APPROVED",
    "CONTEXT_PREFIX",
    "Loop",
    "Orchestration",
    "Pipeline",
    "Supervisor",
    "Swarm",
]
