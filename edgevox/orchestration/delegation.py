"""Delegation: an agent asks other agents to do part of its work.

(Just over 400 lines: the registry and the delegator it records are one concept.)

:class:`Delegator` runs a named agent on a sub-task in a child context one level
deeper (``ctx.depth + 1``). Chains are bounded: past ``max_depth`` (default 5) the
delegating agent receives, as its tool result::

    {"ok": False, "error": "Maximum delegation depth (5) reached: ..."}

so a small model that keeps delegating is told to answer instead of looping.
Every delegated run goes through :func:`~edgevox.agents.run.run_child` (child
context one level deeper, the one failure policy): a failing worker is an
``AgentResult(ok=False)``, never an exception into the calling agent;
cancellation (``Cancelled``) still propagates. An unknown target is a caller's
mistake: :class:`~edgevox.errors.DelegationError` names the agents it may delegate
to (the ``delegate`` tool hands that message to the model as its tool result).

Three forms: :meth:`Delegator.delegate` (on the caller's thread),
:meth:`Delegator.delegate_parallel` (a pool of at most ``max_concurrency`` worker
threads, results in request order) and :meth:`Delegator.delegate_background`
(returns a :class:`DelegationHandle` at once; status and output can be queried
later, and ``on_done`` hands the result to a delivery strategy). Every delegation
is recorded in an :class:`AgentRegistry` (parent, depth, status, children, stats)
that :meth:`AgentRegistry.cleanup` keeps bounded.

Agents reach the delegator through ``ctx.delegator`` and the
:data:`delegate` tool (see :func:`delegation_tool`).
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

from edgevox.agents.base import Agent, AgentResult
from edgevox.agents.run import run_child
from edgevox.errors import Cancelled, DelegationError
from edgevox.orchestration.events import DelegationFinished, DelegationStarted
from edgevox.runtime.activities import track
from edgevox.runtime.context import AgentContext

DEFAULT_MAX_DEPTH = 5

ACTIVE = "active"
COMPLETED = "completed"
FAILED = "failed"
CANCELLED = "cancelled"


@dataclass(frozen=True)
class AgentInstance:
    """One delegated run of an agent, as recorded by the registry."""

    id: str
    agent: str
    parent: str | None
    depth: int
    session_id: str
    status: str = ACTIVE
    task: str = ""
    output: str = ""
    error: str = ""
    started_at: float = 0.0
    finished_at: float | None = None
    children: tuple[str, ...] = ()


class AgentRegistry:
    """Thread-safe record of delegated agent instances. ``clock`` is injectable (monotonic s)."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._items: dict[str, AgentInstance] = {}
        self._ids = itertools.count(1)
        self._totals = {COMPLETED: 0, FAILED: 0, CANCELLED: 0}

    def register(
        self, agent: str, *, parent: str | None = None, depth: int = 0, session_id: str = "default", task: str = ""
    ) -> str:
        with self._lock:
            inst_id = f"{agent}-{next(self._ids)}"
            self._items[inst_id] = AgentInstance(
                inst_id, agent, parent, depth, session_id, task=task, started_at=self._clock()
            )
            if parent is not None and parent in self._items:
                p = self._items[parent]
                self._items[parent] = replace(p, children=p.children + (inst_id,))
            return inst_id

    def finish(self, inst_id: str, status: str, *, output: str = "", error: str = "") -> None:
        if status not in (COMPLETED, FAILED, CANCELLED):
            raise ValueError(f"status {status!r}: must be completed, failed or cancelled")
        with self._lock:
            item = self._items.get(inst_id)
            if item is None or item.status != ACTIVE:
                return
            self._items[inst_id] = replace(item, status=status, output=output, error=error, finished_at=self._clock())
            self._totals[status] += 1

    def get(self, inst_id: str) -> AgentInstance | None:
        with self._lock:
            return self._items.get(inst_id)

    def children(self, inst_id: str) -> list[AgentInstance]:
        with self._lock:
            item = self._items.get(inst_id)
            return [self._items[c] for c in item.children if c in self._items] if item else []

    def instances(self, *, status: str | None = None, session_id: str | None = None) -> list[AgentInstance]:
        with self._lock:
            return [
                i
                for i in self._items.values()
                if (status is None or i.status == status) and (session_id is None or i.session_id == session_id)
            ]

    def stats(self) -> dict[str, Any]:
        """Counts of current entries by status, all-time totals, and the deepest active chain."""
        with self._lock:
            items = list(self._items.values())
            totals = dict(self._totals)
        by_status = {s: sum(1 for i in items if i.status == s) for s in (ACTIVE, COMPLETED, FAILED, CANCELLED)}
        return {
            **by_status,
            "entries": len(items),
            "total_finished": totals,
            "max_active_depth": max((i.depth for i in items if i.status == ACTIVE), default=0),
        }

    def cleanup(self, *, finished_older_than_s: float = 0.0, stale_after_s: float | None = None) -> int:
        """Drop finished entries older than ``finished_older_than_s``; mark active entries older
        than ``stale_after_s`` failed ("stale") and drop them. Returns how many were removed."""
        now = self._clock()
        with self._lock:
            remove = []
            for inst_id, item in self._items.items():
                if item.status != ACTIVE and item.finished_at is not None:
                    if now - item.finished_at >= finished_older_than_s:
                        remove.append(inst_id)
                elif stale_after_s is not None and now - item.started_at >= stale_after_s:
                    self._totals[FAILED] += 1
                    remove.append(inst_id)
            for inst_id in remove:
                del self._items[inst_id]
            return len(remove)


@dataclass
class DelegationHandle:
    """A background delegation: query ``status``/``output`` later, ``wait`` or ``cancel`` it."""

    id: str
    agent: str
    status: str = "pending"
    """pending, active (running), completed, failed or cancelled."""
    output: str = ""
    error: str = ""
    _done: threading.Event = field(default_factory=threading.Event, repr=False)
    _ctx: AgentContext | None = field(default=None, repr=False)

    @property
    def done(self) -> bool:
        return self._done.is_set()

    def wait(self, timeout_s: float | None = None) -> bool:
        return self._done.wait(timeout_s)

    def cancel(self, reason: str = "cancelled") -> None:
        if self._ctx is not None:
            self._ctx.cancel_token.cancel(reason)

    def result(self) -> AgentResult:
        if self.status == COMPLETED:
            return AgentResult(self.output, agent=self.agent)
        return AgentResult(
            agent=self.agent,
            ok=False,
            error=self.error,
            cancelled=self.status == CANCELLED,
            data={"status": self.status},
        )


class Delegator:
    """Runs named agents on sub-tasks with depth, concurrency and timeout limits."""

    def __init__(
        self,
        agents: Mapping[str, Agent],
        *,
        registry: AgentRegistry | None = None,
        max_depth: int = DEFAULT_MAX_DEPTH,
        max_concurrency: int = 2,
        timeout_s: float | None = None,
    ) -> None:
        if max_depth < 1:
            raise ValueError(f"max_depth = {max_depth}: must be >= 1")
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency = {max_concurrency}: must be >= 1")
        self.agents = dict(agents)
        self.registry = registry or AgentRegistry()
        self.max_depth = max_depth
        self.max_concurrency = max_concurrency
        self.timeout_s = timeout_s
        # Caps background delegations across calls; parallel calls cap with their pool size.
        self._background_slots = threading.BoundedSemaphore(max_concurrency)
        self._threads: set[threading.Thread] = set()
        self._lock = threading.Lock()
        self.peak_concurrency = 0
        self._running = 0

    # -- checks ------------------------------------------------------------------------------

    def _check_target(self, target: str) -> None:
        if target not in self.agents:
            raise DelegationError(
                f"unknown agent {target!r}; you can delegate to: {', '.join(sorted(self.agents)) or 'nobody'}"
            )

    def _refuse(self, target: str, ctx: AgentContext) -> str:
        self._check_target(target)
        if ctx.depth + 1 > self.max_depth:
            return (
                f"Maximum delegation depth ({self.max_depth}) reached: {ctx.agent_name or 'this agent'} at depth "
                f"{ctx.depth} cannot delegate to {target!r}. Answer with what you have."
            )
        return ""

    # -- synchronous ---------------------------------------------------------------------------

    def delegate(self, target: str, task: str, ctx: AgentContext) -> AgentResult:
        """Run ``target`` on ``task`` one level deeper, on this thread. Raises ``DelegationError``
        for an unknown target and ``Cancelled``; every other failure is an ``ok=False`` result."""
        refusal = self._refuse(target, ctx)
        if refusal:
            return AgentResult(agent=target, ok=False, error=refusal)
        # No concurrency slot: this runs on the caller's thread (a nested chain taking one
        # slot per level would deadlock once the chain is deeper than the cap).
        return self._run(target, task, ctx, background=False)

    def delegate_parallel(self, requests: Sequence[tuple[str, str]], ctx: AgentContext) -> list[AgentResult]:
        """Run ``(target, task)`` pairs at once, at most ``max_concurrency`` at a time; results in order.
        Every target is checked before any starts (``DelegationError`` names an unknown one)."""
        for target, _task in requests:
            self._check_target(target)
        results: list[AgentResult | None] = [None] * len(requests)
        runnable = []
        for i, (target, task) in enumerate(requests):
            refusal = self._refuse(target, ctx)
            if refusal:
                results[i] = AgentResult(agent=target, ok=False, error=refusal)
            else:
                runnable.append((i, target, task))
        if runnable:
            workers = min(self.max_concurrency, len(runnable))
            with ThreadPoolExecutor(workers, thread_name_prefix="edgevox-delegate") as pool:
                futures = [(i, pool.submit(self._run_slotted, t, task, ctx)) for i, t, task in runnable]
                for i, fut in futures:
                    results[i] = fut.result()
        ctx.cancel_token.raise_if_cancelled()
        return [r for r in results if r is not None]

    def _run_slotted(self, target: str, task: str, ctx: AgentContext) -> AgentResult:
        try:
            return self._run(target, task, ctx, background=False)
        except Cancelled as exc:
            return AgentResult(agent=target, ok=False, cancelled=True, error=f"{target}: cancelled: {exc.reason}")

    # -- background ----------------------------------------------------------------------------

    def delegate_background(
        self,
        target: str,
        task: str,
        ctx: AgentContext,
        *,
        on_done: Callable[[DelegationHandle], None] | None = None,
    ) -> DelegationHandle:
        """Start ``target`` on its own thread and return a handle at once.

        The run's context is a child of ``ctx``, so a safety stop that cancels ``ctx``
        cancels it too. ``on_done(handle)`` runs on the worker thread when it ends.
        """
        refusal = self._refuse(target, ctx)  # raises DelegationError for an unknown target
        handle = DelegationHandle(id="", agent=target)
        if refusal:
            handle.status, handle.error = FAILED, refusal
            handle._done.set()
            return handle
        child = handle._ctx = ctx.child()

        def work() -> None:
            try:
                with self._background_slots, track(ctx, "worker", f"delegate {target}", child.cancel_token):
                    handle.status = ACTIVE
                    try:
                        res = self._run(target, task, child, background=True, handle=handle)
                    except Cancelled as exc:
                        res = AgentResult(agent=target, ok=False, cancelled=True, error=f"cancelled: {exc.reason}")
                if child.cancelled and res.ok:
                    # It finished after a stop (ignoring the cancel): the late result is discarded.
                    res = AgentResult(
                        agent=target, ok=False, cancelled=True, error=f"cancelled: {child.cancel_token.reason}"
                    )
                handle.output = res.text if res.ok else ""
                handle.error = res.error
                handle.status = COMPLETED if res.ok else CANCELLED if res.cancelled else FAILED
            finally:
                child.cancel_token.detach()
                handle._done.set()
                if on_done is not None:
                    on_done(handle)
                with self._lock:
                    self._threads.discard(threading.current_thread())

        thread = threading.Thread(target=work, name=f"edgevox-delegate-bg-{target}", daemon=True)
        with self._lock:
            self._threads.add(thread)
        thread.start()
        return handle

    def close(self, timeout_s: float = 2.0) -> list[str]:
        """Wait for background delegations; returns the names of threads still running."""
        deadline = time.monotonic() + timeout_s
        with self._lock:
            threads = list(self._threads)
        for t in threads:
            t.join(max(0.0, deadline - time.monotonic()))
        return [t.name for t in threads if t.is_alive()]

    # -- internals -------------------------------------------------------------------------------

    def _run(
        self, target: str, task: str, ctx: AgentContext, *, background: bool, handle: DelegationHandle | None = None
    ) -> AgentResult:
        parent_id = ctx.delegation_id
        inst_id = self.registry.register(
            target, parent=parent_id, depth=ctx.depth + 1, session_id=ctx.session_id, task=task
        )
        if handle is not None:
            handle.id = inst_id
        ctx.publish(
            DelegationStarted(
                delegation_id=inst_id,
                parent=ctx.agent_name,
                agent=target,
                depth=ctx.depth + 1,
                background=background,
            )
        )
        with self._lock:
            self._running += 1
            self.peak_concurrency = max(self.peak_concurrency, self._running)
        try:
            # A worker gets its own scratch state: what it keeps must not leak into the delegator's.
            outcome = run_child(
                self.agents[target],
                task,
                ctx,
                timeout_s=self.timeout_s,
                delegation_id=inst_id,
                delegator=self,
                state={},
            )
        except Cancelled as exc:
            self.registry.finish(inst_id, CANCELLED, error=exc.reason)
            ctx.publish(DelegationFinished(delegation_id=inst_id, agent=target, status=CANCELLED, error=exc.reason))
            raise
        finally:
            with self._lock:
                self._running -= 1
        status = COMPLETED if outcome.ok else FAILED
        self.registry.finish(inst_id, status, output=outcome.text, error=outcome.error)
        ctx.publish(
            DelegationFinished(
                delegation_id=inst_id,
                agent=target,
                status=status,
                output=outcome.text,
                error=outcome.error,
                duration_s=outcome.duration_s,
            )
        )
        return outcome


def tool_reply(result: AgentResult) -> dict[str, Any]:
    """What a delegating model reads: ``{"ok": true, "agent", "output"}`` or ``{"ok": false, "error"}``."""
    if result.ok:
        return {"ok": True, "agent": result.agent, "output": result.text}
    return {"ok": False, "error": result.error}


def delegate_via_context(ctx: AgentContext, agent: str, task: str) -> dict[str, Any]:
    """What the ``delegate`` tool does: find the delegator in ``ctx.delegator``, delegate, and
    answer in the tool's JSON shape (an unknown target's message included)."""
    delegator = ctx.delegator if ctx is not None else None
    if delegator is None:
        return {"ok": False, "error": "delegation is not available here (no delegator in the agent context)"}
    try:
        return tool_reply(delegator.delegate(agent, task, ctx))
    except DelegationError as exc:
        return {"ok": False, "error": str(exc)}
