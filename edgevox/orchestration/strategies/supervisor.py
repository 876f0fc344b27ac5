"""The ``Supervisor`` strategy (the orchestrator pattern), with RoomKit's modes and defaults.

* ``strategy=None`` (default): the supervisor decides. It gets one ``delegate_to_<worker>``
  tool per worker and calls them itself (inline when ``wait_for_result``, the default; else in
  the background, the result delivered later).
* ``strategy="sequential"|"parallel"``, ``auto_delegate=False`` (default): one
  ``delegate_workers(task)`` tool running the whole team in that strategy.
* ``auto_delegate=True`` (needs a strategy): every turn runs the team, on the request
  refined first by the supervisor (``refine_task=True``, with ``refine_instruction``), and
  the supervisor answers from the workers' reports.
* ``async_delivery=True`` (needs a strategy and a delivery): the voice mode. The supervisor
  gets ``delegate_workers`` started in the background and answers small talk itself; a
  delegation speaks ``delegation_message`` at once, and the team's answer is delivered later
  through ``delivery`` (a strategy, or ``"immediate"``/``"wait_for_idle"``/``"queued"``).

A worker that fails or times out does not sink the answer: ``data["missing"]`` names it
and the reply says so. The tools live in :mod:`.supervisor_tools`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import replace

from edgevox.agents.base import Agent, AgentResult
from edgevox.agents.events import ReplyDelta
from edgevox.agents.run import child_name, run_child
from edgevox.errors import ArgumentError, Cancelled
from edgevox.orchestration.delegation import (
    ACTIVE,
    CANCELLED,
    COMPLETED,
    FAILED,
    DelegationHandle,
    Delegator,
)
from edgevox.orchestration.delivery import DeliveryStrategy, resolve_delivery
from edgevox.orchestration.strategies.base import Orchestration, check_agents
from edgevox.orchestration.strategies.supervisor_tools import TurnRecord, team_tool, worker_tools
from edgevox.orchestration.workflows import Run
from edgevox.runtime.activities import track
from edgevox.runtime.context import AgentContext
from edgevox.runtime.lifecycle import join_threads

DEFAULT_REFINE_INSTRUCTION = (
    "Give the core topic or subject of the user's request, and nothing else: no questions, "
    "no instructions, no formatting. For example, for 'analyse the kitchen' answer 'the kitchen'."
)
"""What ``refine_task`` asks the supervisor before the workers run (RoomKit's meaning: the topic only)."""

DEFAULT_DELEGATION_MESSAGE = "I'm dispatching my team to work on this."
"""Spoken at once when a background delegation starts (RoomKit's default)."""

STRATEGIES = (None, "sequential", "parallel")


class Supervisor(Orchestration):
    """A supervisor agent with workers (RoomKit's Supervisor; see the module for the modes).

    The result's ``data["missing"]`` lists the workers that failed or timed out,
    ``data["handles"]`` the background handles started in that turn (``wait()`` on them).
    """

    name = "supervisor"

    def __init__(
        self,
        supervisor: Agent,
        workers: Sequence[Agent],
        *,
        strategy: str | None = None,
        auto_delegate: bool = False,
        async_delivery: bool = False,
        refine_task: bool = True,
        refine_instruction: str | None = None,
        delegation_message: str | None = DEFAULT_DELEGATION_MESSAGE,
        wait_for_result: bool = True,
        delivery: DeliveryStrategy | str | None = None,
        max_concurrency: int = 2,
        max_depth: int = 5,
        **kw: object,
    ) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]  # Orchestration's keyword options, checked by its signature
        if strategy not in STRATEGIES:
            raise ArgumentError(
                f"Supervisor strategy {strategy!r}: use None (the supervisor decides), 'sequential' or 'parallel'"
            )
        if auto_delegate and strategy is None:
            raise ArgumentError(
                "Supervisor(auto_delegate=True) needs strategy='sequential' or 'parallel' (which way to run the workers)"
            )
        if async_delivery and strategy is None:
            raise ArgumentError(
                "Supervisor(async_delivery=True) runs the team in the background with strategy='sequential' or "
                "'parallel'; with strategy=None use wait_for_result=False for background delegations"
            )
        self.delivery = resolve_delivery(delivery)
        if self.delivery is None and (async_delivery or (strategy is None and not wait_for_result)):
            raise ArgumentError(
                "Supervisor: background delegation (async_delivery=True or wait_for_result=False) needs delivery="
                "'immediate', 'wait_for_idle', 'queued' or a DeliveryStrategy to deliver the answer later"
            )
        self.supervisor = supervisor
        self.supervisor_name = child_name(supervisor)
        self.workers = {child_name(w): w for w in check_agents("Supervisor", workers)}
        self.strategy = strategy
        self.auto_delegate = auto_delegate
        self.async_delivery = async_delivery
        self.refine_task = refine_task
        self.refine_instruction = refine_instruction or DEFAULT_REFINE_INSTRUCTION
        self.delegation_message = delegation_message
        self.wait_for_result = wait_for_result
        self._threads: set[threading.Thread] = set()
        self._running: dict[tuple[str, str], DelegationHandle | None] = {}
        """Background work per ``(session, worker)`` (``""``: the team); None = being started."""
        self._lock = threading.Lock()
        self.delegator = Delegator(
            self.workers, max_depth=max_depth, max_concurrency=max_concurrency, timeout_s=self.timeout_s
        )

    # -- one turn ---------------------------------------------------------------------------------

    def _run(self, task: str, ctx: AgentContext) -> Run:
        earlier = self._undelivered(ctx)
        if earlier:
            yield ReplyDelta(source=self.name, text=earlier + " ")
        if self.auto_delegate and not self.async_delivery:
            result = yield from self._auto_answer(task, ctx)
        else:
            result = yield from self._tool_answer(task, ctx)
        if earlier:
            result = replace(result, text=f"{earlier} {result.text}".strip(), ok=True)
        return result

    def _undelivered(self, ctx: AgentContext) -> str:
        """Background answers this session never heard (the delivery failed, or it has no sink so
        nobody else will say them): said at the start of the next turn, so no answer is lost."""
        if self.delivery is None:
            return ""
        self.delivery.pump()
        items = self.delivery.take_undelivered(ctx.session_id, pending=self.delivery.sink is None)
        return " ".join(i.text for i in items)

    def _tool_answer(self, task: str, ctx: AgentContext) -> Run:
        """The supervisor answers with its delegation tools for this run (``ctx.tools``)."""
        turn = TurnRecord()
        tools = (team_tool(self, turn, ctx),) if self.strategy is not None else worker_tools(self, turn, ctx)
        stream = self.stream_call(self.supervisor, task, ctx, tools=tools, delegator=self.delegator)
        announced = ""
        try:
            while True:
                try:
                    event = next(stream)
                except StopIteration as stop:
                    final: AgentResult = stop.value
                    break
                if turn.dispatched and not announced and self.delegation_message:
                    announced = self.delegation_message
                    yield ReplyDelta(source=self.name, text=announced + " ")
                yield event
        finally:
            stream.close()
        if turn.dispatched and not announced and self.delegation_message:
            announced = self.delegation_message
            yield ReplyDelta(source=self.name, text=announced)
        text = f"{announced} {final.text}".strip()
        missing = turn.missing
        return AgentResult(
            text,
            agent=final.agent,
            ok=final.ok or bool(text),
            error=final.error,
            steps=[final],
            data={"missing": missing, "handles": list(turn.handles), "delegated": list(turn.dispatched)},
        )

    def _auto_answer(self, task: str, ctx: AgentContext) -> Run:
        """``auto_delegate``: (refine) -> workers -> the supervisor answers from their reports."""
        steps: list[AgentResult] = []
        sub_task = task
        if self.refine_task:
            refined = self.call(self.supervisor, f"{self.refine_instruction}\nUser request: {task}", ctx)
            steps.append(refined)
            if refined.ok and refined.text.strip():
                sub_task = refined.text.strip()
        results = self.run_workers(sub_task, ctx)
        missing = [r.agent for r in results if not r.ok]
        synthesis = yield from self.stream_call(self.supervisor, self.synthesis_prompt(task, results), ctx)
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

    @staticmethod
    def synthesis_prompt(task: str, results: Sequence[AgentResult]) -> str:
        lines = [f"- {r.agent}: {r.text}" if r.ok else f"- {r.agent} did not answer ({r.error})" for r in results]
        return f"User request: {task}\nYour workers reported:\n" + "\n".join(lines) + "\nAnswer the user."

    def run_workers(self, task: str, ctx: AgentContext) -> list[AgentResult]:
        """Every worker on ``task``: at once (``parallel``) or in turn, each seeing the earlier results."""
        names = list(self.workers)
        if self.strategy == "parallel":
            return self.delegator.delegate_parallel([(n, task) for n in names], ctx)
        results: list[AgentResult] = []
        for n in names:
            earlier = "".join(f"\n{r.agent} found: {r.text}" for r in results if r.ok)
            results.append(self.delegator.delegate(n, task + earlier, ctx))
        return results

    # -- background -------------------------------------------------------------------------------

    def start_team(self, task: str, ctx: AgentContext) -> DelegationHandle | None:
        """Run the team on ``task`` on a thread (``edgevox-supervisor-team``) in a child of ``ctx``
        (a safety stop still cancels it); the supervisor's answer from their reports goes to the
        delivery. None while the team is already at work in this session."""
        key = (ctx.session_id, "")
        child = ctx.child()
        handle = DelegationHandle(id=f"{self.name}-team", agent=self.supervisor_name, status=ACTIVE, _ctx=child)
        with self._lock:
            if key in self._running:
                return None
            self._running[key] = handle

        def work() -> None:
            try:
                with track(ctx, "worker", f"{self.name} team", child.cancel_token) as activity:
                    results = self.run_workers(task, child)
                    answer = run_child(self.supervisor, self.synthesis_prompt(task, results), child)
                if activity.stale or child.cancelled:  # finished after a stop: never delivered
                    raise Cancelled(child.cancel_token.reason or "stopped")
                text = answer.text if answer.ok and answer.text else self._reports(results)
                missing = [r.agent for r in results if not r.ok]
                if missing:
                    text += f" (I could not get an answer from {', '.join(missing)}, so this may be incomplete.)"
                handle.output, handle.status = text, COMPLETED
                self._submit(text, ctx, handle)
            except Cancelled as exc:
                handle.status, handle.error = CANCELLED, exc.reason
            except Exception as exc:  # noqa: BLE001 - reported through the handle and in words
                handle.status, handle.error = FAILED, f"{type(exc).__name__}: {exc}"
                self._submit(f"Sorry, my team could not finish that: {exc}", ctx, handle)
            finally:
                child.cancel_token.detach()
                self._finished(key, handle)

        thread = threading.Thread(target=work, name="edgevox-supervisor-team", daemon=True)
        with self._lock:
            self._threads.add(thread)
        thread.start()
        return handle

    def start_worker(self, worker: str, task: str, ctx: AgentContext) -> DelegationHandle | None:
        """One worker in the background (``wait_for_result=False``); its result goes to the
        delivery. None while that worker is already at work in this session."""
        key = (ctx.session_id, worker)
        with self._lock:
            if key in self._running:
                return None
            self._running[key] = None  # reserved until started

        def done(handle: DelegationHandle) -> None:
            if handle.status == COMPLETED:
                self._submit(f"{worker}: {handle.output}", ctx, handle)
            elif handle.status == FAILED:
                self._submit(f"Sorry, {worker} could not finish that: {handle.error}", ctx, handle)
            self._finished(key, handle)

        try:
            handle = self.delegator.delegate_background(worker, task, ctx, on_done=done)
        except BaseException:
            self._finished(key, None)
            raise
        with self._lock:
            if not handle.done and key in self._running:
                self._running[key] = handle
        return handle

    @staticmethod
    def _reports(results: Sequence[AgentResult]) -> str:
        return "\n".join(f"{r.agent}: {r.text}" for r in results if r.ok)

    def _submit(self, text: str, ctx: AgentContext, handle: DelegationHandle) -> None:
        assert self.delivery is not None  # checked in __init__ for every background mode
        self.delivery.submit(text, session_id=ctx.session_id, source=self.name, handle=handle.id)

    def _finished(self, key: tuple[str, str], handle: DelegationHandle | None) -> None:
        with self._lock:
            if key in self._running and (self._running[key] is None or self._running[key] is handle):
                del self._running[key]
            self._threads.discard(threading.current_thread())
        if handle is not None:
            handle._done.set()

    def close(self, timeout_s: float = 2.0) -> list[str]:
        """Wait for background work; names of threads still running."""
        deadline = time.monotonic() + timeout_s
        with self._lock:
            threads = list(self._threads)
        left = join_threads(threads, deadline)
        return left + self.delegator.close(max(0.0, deadline - time.monotonic()))
