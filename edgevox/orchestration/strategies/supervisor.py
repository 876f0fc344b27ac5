"""The ``Supervisor`` strategy (the orchestrator pattern): a supervisor agent has workers do
the work and answers itself from their results. A worker that fails or times out does not
sink the answer: the reply says which worker is missing. ``async_delivery`` answers at once
and delivers the final answer later through a delivery strategy."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Literal

from edgevox.agents.base import Agent, AgentResult
from edgevox.agents.events import ReplyDelta
from edgevox.agents.run import child_name, drain
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
from edgevox.orchestration.strategies.base import Orchestration, check_agents
from edgevox.orchestration.workflows import Run
from edgevox.runtime.activities import track
from edgevox.runtime.context import AgentContext


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
        self.workers = {child_name(w): w for w in check_agents("Supervisor", workers)}
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
