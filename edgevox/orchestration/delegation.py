"""Delegation: an agent asks other agents to do part of its work (supyagent's semantics).

Over 400 lines because the registry, the delegator it records and the background
"processes" the model queries are one concept, with one lock discipline.

:class:`Delegator` runs a named agent on a sub-task in a child context one level
deeper (``ctx.depth + 1``). Who may delegate to whom is supyagent's ``delegates`` list:
``Delegator(agents, delegates={"planner": ["coder"]})`` lets ``planner`` delegate to
``coder`` only, and an agent missing from it to nobody; without ``delegates`` an agent may
delegate to every other agent of the delegator. Delegating to yourself needs your own name
in your list. A refused target gets supyagent's words as the tool result::

    {"ok": False, "error": "Agent 'writer' is not in the delegates list. Available: coder"}

Chains are bounded: at depth ``max_depth`` (default 5) a delegation is refused with
supyagent's ``"Maximum delegation depth (5) reached. Cannot delegate further."``, so a
small model that keeps delegating is told to answer instead of looping.
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

Background delegations are the model's "processes" (supyagent's ``list_processes`` /
``get_process_output``): :meth:`Delegator.processes` and :meth:`Delegator.process`. The tools
agents call are in :mod:`edgevox.orchestration.delegation_tools`; a delegation that crosses
to another process over the Zenoh bridge keeps its depth
(:mod:`edgevox.orchestration.remote_delegation`).
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
from edgevox.runtime.lifecycle import join_threads

DEFAULT_MAX_DEPTH = 5
MAX_KEPT_PROCESSES = 64
"""Finished background delegations a delegator keeps for ``get_process_output`` (oldest go first)."""

ACTIVE = "active"
COMPLETED = "completed"
FAILED = "failed"
CANCELLED = "cancelled"


def not_in_delegates(target: str, allowed: Sequence[str]) -> str:
    """supyagent's refusal of a target missing from the caller's ``delegates`` list."""
    return f"Agent '{target}' is not in the delegates list. Available: {', '.join(allowed) or 'none'}"


def depth_reached(max_depth: int) -> str:
    """supyagent's refusal of a delegation at the depth limit."""
    return f"Maximum delegation depth ({max_depth}) reached. Cannot delegate further."


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
    """Thread-safe record of delegated agent instances. ``clock`` is injectable (monotonic s).

    supyagent's queries: :meth:`get_agent` (the live agent of an instance), :meth:`get_depth`
    (its delegation depth, 0 if unknown) and :meth:`stats` (``total``, ``active``,
    ``completed``, ``failed``, plus edgevox's ``cancelled``, all-time totals and the deepest
    active chain)."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._items: dict[str, AgentInstance] = {}
        self._live: dict[str, Any] = {}
        self._ids = itertools.count(1)
        self._totals = {COMPLETED: 0, FAILED: 0, CANCELLED: 0}

    def register(
        self,
        agent: str,
        *,
        parent: str | None = None,
        depth: int = 0,
        session_id: str = "default",
        task: str = "",
        instance: Any = None,
    ) -> str:
        """Record a new instance of ``agent`` (``instance``: the live agent object, for
        :meth:`get_agent`); returns its id."""
        with self._lock:
            inst_id = f"{agent}-{next(self._ids)}"
            self._items[inst_id] = AgentInstance(
                inst_id, agent, parent, depth, session_id, task=task, started_at=self._clock()
            )
            if instance is not None:
                self._live[inst_id] = instance
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

    def get_agent(self, inst_id: str) -> Any:
        """The live agent object running (or that ran) instance ``inst_id``; None if unknown."""
        with self._lock:
            return self._live.get(inst_id)

    def get_depth(self, inst_id: str) -> int:
        """The delegation depth of instance ``inst_id`` (0 for an unknown id, as supyagent)."""
        with self._lock:
            item = self._items.get(inst_id)
            return item.depth if item is not None else 0

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
        """Current entries (``total``, and by status), all-time totals and the deepest active chain."""
        with self._lock:
            items = list(self._items.values())
            totals = dict(self._totals)
        by_status = {s: sum(1 for i in items if i.status == s) for s in (ACTIVE, COMPLETED, FAILED, CANCELLED)}
        return {
            "total": len(items),
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
                self._live.pop(inst_id, None)
            return len(remove)


@dataclass
class DelegationHandle:
    """A background delegation (a "process" to the model): query ``status``/``output`` later,
    ``wait`` or ``cancel`` it."""

    id: str
    agent: str
    status: str = "pending"
    """pending, active (running), completed, failed or cancelled."""
    output: str = ""
    error: str = ""
    task: str = ""
    session_id: str = "default"
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
    """Runs named agents on sub-tasks with an allowlist (``delegates``), depth, concurrency
    and timeout limits. ``delegates``: ``{agent: [agents it may delegate to]}``; None lets
    every agent delegate to every other one (code, with no ``ctx.agent_name``, is never limited)."""

    def __init__(
        self,
        agents: Mapping[str, Agent],
        *,
        registry: AgentRegistry | None = None,
        max_depth: int = DEFAULT_MAX_DEPTH,
        max_concurrency: int = 2,
        timeout_s: float | None = None,
        delegates: Mapping[str, Sequence[str]] | None = None,
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
        self.delegates = _checked_delegates(delegates)
        # Caps background delegations across calls; parallel calls cap with their pool size.
        self._background_slots = threading.BoundedSemaphore(max_concurrency)
        self._threads: set[threading.Thread] = set()
        self._processes: dict[str, DelegationHandle] = {}
        self._lock = threading.Lock()
        self.peak_concurrency = 0
        self._running = 0

    # -- checks ------------------------------------------------------------------------------

    def allowed(self, caller: str) -> list[str]:
        """The agents ``caller`` may delegate to (its ``delegates`` list; without one, the others)."""
        if self.delegates is None:
            return sorted(n for n in self.agents if n != caller)
        return list(self.delegates.get(caller, ()))

    def _check_target(self, target: str) -> None:
        if target not in self.agents:
            raise DelegationError(
                f"unknown agent {target!r}; you can delegate to: {', '.join(sorted(self.agents)) or 'nobody'}"
            )

    def _refuse(self, target: str, ctx: AgentContext) -> str:
        """Why ``ctx``'s agent may not delegate to ``target`` now ("" if it may). Raises
        ``DelegationError`` for a target that is allowed but does not exist."""
        caller = ctx.agent_name
        if caller and (self.delegates is not None or target == caller) and target not in self.allowed(caller):
            return not_in_delegates(target, self.allowed(caller))
        self._check_target(target)
        if ctx.depth >= self.max_depth:
            return depth_reached(self.max_depth)
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
        refusals = [self._refuse(target, ctx) for target, _task in requests]
        results: list[AgentResult | None] = [
            AgentResult(agent=target, ok=False, error=refusal) if refusal else None
            for (target, _task), refusal in zip(requests, refusals, strict=True)
        ]
        runnable = [(i, target, task) for i, (target, task) in enumerate(requests) if results[i] is None]
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
        """Start ``target`` on its own thread and return a handle at once (its ``id`` is the
        process id the model queries).

        The run's context is a child of ``ctx``, so cancelling ``ctx`` cancels it, and it is
        registered with ``ctx.activities`` from the start, so a safety stop reaches it even
        while it waits for a slot. ``on_done(handle)`` runs on the worker thread when it ends.
        """
        refusal = self._refuse(target, ctx)  # raises DelegationError for an unknown target
        handle = DelegationHandle(id="", agent=target, task=task, session_id=ctx.session_id)
        if refusal:
            handle.status, handle.error = FAILED, refusal
            handle._done.set()
            return handle
        child = handle._ctx = ctx.child()
        handle.id = self._begin(target, task, ctx, background=True)
        self._keep(handle)

        def work() -> None:
            try:
                with track(ctx, "worker", f"delegate {target}", child.cancel_token), self._background_slots:
                    handle.status = ACTIVE
                    try:
                        res = self._run(target, task, child, background=True, inst_id=handle.id, settle=False)
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
                # Recorded and announced once the handle is final: what a listener reads is the end.
                self._settle(handle.id, target, handle.status, res, child)
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

    def _keep(self, handle: DelegationHandle) -> None:
        with self._lock:
            self._processes[handle.id] = handle
            finished = [h.id for h in self._processes.values() if h.done]
            for old in finished[: max(0, len(finished) - MAX_KEPT_PROCESSES)]:
                del self._processes[old]

    def processes(self, *, session_id: str | None = None, include_completed: bool = False) -> list[DelegationHandle]:
        """Background delegations (of ``session_id``, or all), oldest first; running ones only
        unless ``include_completed`` (supyagent's ``list_processes``)."""
        with self._lock:
            items = list(self._processes.values())
        return [
            h for h in items if (session_id is None or h.session_id == session_id) and (include_completed or not h.done)
        ]

    def process(self, process_id: str) -> DelegationHandle | None:
        """The background delegation ``process_id`` (None if unknown or forgotten)."""
        with self._lock:
            return self._processes.get(process_id)

    def close(self, timeout_s: float = 2.0) -> list[str]:
        """Wait for background delegations; returns the names of threads still running."""
        with self._lock:
            threads = list(self._threads)
        return join_threads(threads, time.monotonic() + timeout_s)

    # -- internals -------------------------------------------------------------------------------

    def _begin(self, target: str, task: str, ctx: AgentContext, *, background: bool) -> str:
        inst_id = self.registry.register(
            target,
            parent=ctx.delegation_id,
            depth=ctx.depth + 1,
            session_id=ctx.session_id,
            task=task,
            instance=self.agents[target],
        )
        started = DelegationStarted(
            delegation_id=inst_id, parent=ctx.agent_name, agent=target, depth=ctx.depth + 1, background=background
        )
        ctx.publish(started)
        return inst_id

    def _run(
        self,
        target: str,
        task: str,
        ctx: AgentContext,
        *,
        background: bool,
        inst_id: str | None = None,
        settle: bool = True,
    ) -> AgentResult:
        """Run one delegation; with ``settle`` record its end (registry, ``DelegationFinished``),
        else the caller does once its handle is final."""
        if inst_id is None:
            inst_id = self._begin(target, task, ctx, background=background)
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
            if settle:
                self._settle(inst_id, target, CANCELLED, AgentResult(agent=target, ok=False, error=exc.reason), ctx)
            raise
        finally:
            with self._lock:
                self._running -= 1
        if settle:
            self._settle(inst_id, target, COMPLETED if outcome.ok else FAILED, outcome, ctx)
        return outcome

    def _settle(self, inst_id: str, target: str, status: str, outcome: AgentResult, ctx: AgentContext) -> None:
        self.registry.finish(inst_id, status, output=outcome.text, error=outcome.error)
        finished = DelegationFinished(
            delegation_id=inst_id,
            agent=target,
            status=status,
            output=outcome.text,
            error=outcome.error,
            duration_s=outcome.duration_s,
        )
        ctx.publish(finished)


def _checked_delegates(delegates: Mapping[str, Sequence[str]] | None) -> dict[str, tuple[str, ...]] | None:
    if delegates is None:
        return None
    if not isinstance(delegates, Mapping):
        raise TypeError(f"delegates must be a mapping {{agent: [agents]}}, got {type(delegates).__name__}")
    out: dict[str, tuple[str, ...]] = {}
    for caller, targets in delegates.items():
        if isinstance(targets, (str, bytes)) or not isinstance(targets, Sequence):
            raise TypeError(f"delegates[{caller!r}] must be a list of agent names, got {targets!r}; write [...]")
        out[str(caller)] = tuple(str(t) for t in targets)
    return out
