"""Workflows: agents made of agents.

``Sequence``, ``Fallback``, ``Loop``, ``Retry``, ``Timeout``, ``Router`` and
``Parallel`` are agents themselves (``run`` / ``stream``), so they nest. Every
child runs in a context made by ``ctx.child(agent_name=...)``: the same bus,
blackboard, session, hooks and deps, and a child cancel token, so sub-agent events
reach the shared bus and cancelling the caller (barge-in, stop) cancels every child,
including parallel ones. ``Parallel`` over agents of an ``AgentPool`` therefore
shares the pool's bus and blackboard when given the pool's context.

``Timeout`` cancels only its *child* token: the caller's context is never cancelled
by a timeout, so later runs in it work (a pitfall of other frameworks).

Threads: everything runs on the caller's thread except ``Parallel`` (one named
thread per branch, all joined before it returns) and ``Timeout`` (one timer thread,
cancelled and joined before it returns).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator
from collections.abc import Sequence as Seq
from typing import Any

from edgevox.agents.base import AgentResult, AgentStream
from edgevox.agents.decoders import NONE_CHOICE
from edgevox.agents.events import AgentReply, ReplyDelta
from edgevox.agents.grammar import choice_grammar
from edgevox.errors import AgentError
from edgevox.runtime.context import AgentContext
from edgevox.runtime.events import Event

Run = Generator[Event, None, AgentResult]


class Workflow:
    """Base class: subclasses implement ``_run(task, ctx)`` as a generator returning a result."""

    name = "workflow"
    description = ""

    def run(self, task: str, ctx: AgentContext | None = None) -> AgentResult:
        return self.stream(task, ctx).result()

    def stream(self, task: str, ctx: AgentContext | None = None) -> AgentStream:
        return AgentStream(self._run(task, ctx or AgentContext()))

    def _run(self, task: str, ctx: AgentContext) -> Run:  # pragma: no cover - abstract
        raise NotImplementedError

    @staticmethod
    def _child(agent: Any, task: str, ctx: AgentContext) -> Run:
        """Run ``agent`` in a child context, passing its events through; returns its result."""
        child = ctx.child(agent_name=getattr(agent, "name", "agent"), depth=ctx.depth + 1)
        try:
            sub = agent.stream(task, child)
            yield from sub
            return sub.result()
        finally:
            child.cancel_token.detach()


class Sequence(Workflow):
    """Run agents one after another; each gets the previous reply as its task (``pass_output``)."""

    def __init__(self, agents: Seq[Any], *, name: str = "sequence", pass_output: bool = True) -> None:
        if not agents:
            raise ValueError("Sequence needs at least one agent")
        self.agents, self.name, self.pass_output = list(agents), name, pass_output

    def _run(self, task: str, ctx: AgentContext) -> Run:
        result = AgentResult(agent=self.name)
        current = task
        for agent in self.agents:
            if ctx.cancelled:
                result.cancelled = True
                break
            step = yield from self._child(agent, current, ctx)
            result.tool_calls += step.tool_calls
            result.skills += step.skills
            result.text, result.ok, result.error, result.cancelled = step.text, step.ok, step.error, step.cancelled
            if not step.ok or step.cancelled:
                break
            if self.pass_output:
                current = step.text
        return result


class Fallback(Workflow):
    """Try agents in order; the first successful result wins."""

    def __init__(self, agents: Seq[Any], *, name: str = "fallback") -> None:
        if not agents:
            raise ValueError("Fallback needs at least one agent")
        self.agents, self.name = list(agents), name

    def _run(self, task: str, ctx: AgentContext) -> Run:
        errors = []
        for agent in self.agents:
            if ctx.cancelled:
                return AgentResult(agent=self.name, cancelled=True)
            res = yield from self._child(agent, task, ctx)
            if res.ok and not res.cancelled:
                return res
            if res.cancelled and ctx.cancelled:
                return res
            errors.append(f"{getattr(agent, 'name', agent)}: {res.error or 'cancelled'}")
        return AgentResult(agent=self.name, ok=False, error="all fallbacks failed: " + "; ".join(errors))


class Loop(Workflow):
    """Re-run ``agent`` on its own output until ``until(result)`` or ``max_iterations``.

    ``until=None`` runs exactly ``max_iterations`` times.
    """

    def __init__(
        self,
        agent: Any,
        until: Callable[[AgentResult], bool] | None = None,
        max_iterations: int = 3,
        *,
        name: str = "loop",
    ) -> None:
        if max_iterations < 1:
            raise ValueError(f"Loop max_iterations = {max_iterations}: must be >= 1")
        self.agent, self.until, self.max_iterations, self.name = agent, until, max_iterations, name

    def _run(self, task: str, ctx: AgentContext) -> Run:
        current = task
        res = AgentResult(agent=self.name)
        for i in range(1, self.max_iterations + 1):
            res = yield from self._child(self.agent, current, ctx)
            res.data["iterations"] = i
            if res.cancelled or not res.ok:
                return res
            if self.until is not None and self.until(res):
                res.data["done"] = True
                return res
            current = res.text
        res.data["done"] = False
        return res


class Retry(Workflow):
    """Re-run ``agent`` on failure (not on cancellation), up to ``attempts`` times."""

    def __init__(self, agent: Any, attempts: int = 3, *, name: str = "retry") -> None:
        if attempts < 1:
            raise ValueError(f"Retry attempts = {attempts}: must be >= 1")
        self.agent, self.attempts, self.name = agent, attempts, name

    def _run(self, task: str, ctx: AgentContext) -> Run:
        res = AgentResult(agent=self.name)
        for i in range(1, self.attempts + 1):
            res = yield from self._child(self.agent, task, ctx)
            res.data["attempts"] = i
            if res.ok or res.cancelled:
                return res
        return res


class Timeout(Workflow):
    """Cancel ``agent`` after ``timeout_s``; the result says it timed out. Never cancels the caller."""

    def __init__(self, agent: Any, timeout_s: float, *, name: str = "timeout") -> None:
        if timeout_s <= 0:
            raise ValueError(f"Timeout timeout_s = {timeout_s}: must be > 0")
        self.agent, self.timeout_s, self.name = agent, timeout_s, name

    def _run(self, task: str, ctx: AgentContext) -> Run:
        guard = ctx.child(agent_name=self.name)  # only this token is ever cancelled by the timer
        fired = threading.Event()

        def expire() -> None:
            fired.set()
            guard.cancel_token.cancel(f"timeout after {self.timeout_s} s")

        timer = threading.Timer(self.timeout_s, expire)
        timer.name = f"edgevox-timeout-{self.name}"
        timer.daemon = True
        timer.start()
        try:
            res = yield from self._child(self.agent, task, guard)
        finally:
            timer.cancel()
            timer.join()
            guard.cancel_token.detach()
        if fired.is_set() and not ctx.cancelled:
            res.ok, res.cancelled = False, False
            res.error = f"{getattr(self.agent, 'name', 'agent')} timed out after {self.timeout_s} s"
            res.data["timed_out"] = True
        return res


class Router(Workflow):
    """Let the LLM pick one route (grammar-constrained to the route names), then run it.

    ``routes``: name -> agent; the prompt lists each route's ``description``. If the
    model picks ``none`` (or no LLM is needed because there is one route) the
    ``default`` route runs; without a default, ``none`` ends with an error result.
    """

    def __init__(
        self,
        routes: dict[str, Any] | Seq[Any],
        llm: Any = None,
        *,
        instructions: str = "Pick the agent best suited to the user's request.",
        default: str | None = None,
        name: str = "router",
    ) -> None:
        if not isinstance(routes, dict):
            routes = {getattr(a, "name", f"route{i}"): a for i, a in enumerate(routes)}
        if not routes:
            raise ValueError("Router needs at least one route")
        # Without an explicit engine, use the routes' own (config-built agents share one).
        llm = llm or next((getattr(a, "llm", None) for a in routes.values() if getattr(a, "llm", None)), None)
        if default is not None and default not in routes:
            raise ValueError(f"Router default {default!r} is not a route; routes: {sorted(routes)}")
        self.routes, self.llm, self.instructions, self.default, self.name = (
            dict(routes),
            llm,
            instructions,
            default,
            name,
        )

    def choose(self, task: str, ctx: AgentContext) -> str | None:
        if len(self.routes) == 1:
            return next(iter(self.routes))
        if self.llm is None:
            raise AgentError(f"Router {self.name!r} needs an LLM to choose between {sorted(self.routes)}")
        lines = "\n".join(f"- {n}: {getattr(a, 'description', '') or n}" for n, a in self.routes.items())
        messages = [
            {"role": "system", "content": f"{self.instructions}\nOptions:\n{lines}\n- {NONE_CHOICE}: none of these"},
            {"role": "user", "content": task},
        ]
        grammar = choice_grammar([*self.routes, NONE_CHOICE])
        lock = ctx.llm_lock
        if lock is not None:
            with lock:
                text = "".join(self.llm.stream(messages, max_tokens=12, grammar=grammar, cancel=ctx.cancel_token))
        else:
            text = "".join(self.llm.stream(messages, max_tokens=12, grammar=grammar, cancel=ctx.cancel_token))
        text = text.strip()
        return text if text in self.routes else self.default

    def _run(self, task: str, ctx: AgentContext) -> Run:
        route = self.choose(task, ctx)
        if ctx.cancelled:
            return AgentResult(agent=self.name, cancelled=True)
        if route is None:
            return AgentResult(agent=self.name, ok=False, error="no route fits the request and no default is set")
        res = yield from self._child(self.routes[route], task, ctx)
        res.data["route"] = route
        return res


class Parallel(Workflow):
    """Run agents at once on threads (each in a child context); ``reduce`` merges the results.

    ``reduce(results) -> AgentResult | str``; the default joins the replies with newlines.
    Cancelling the caller's context cancels every branch. Events of the branches reach
    the bus from their threads; the stream yields the merged reply at the end.
    """

    def __init__(
        self, agents: Seq[Any], *, reduce: Callable[[list[AgentResult]], Any] | None = None, name: str = "parallel"
    ) -> None:
        if not agents:
            raise ValueError("Parallel needs at least one agent")
        self.agents, self.reduce, self.name = list(agents), reduce, name

    def _run(self, task: str, ctx: AgentContext) -> Run:
        results: list[AgentResult | None] = [None] * len(self.agents)

        def branch(i: int, agent: Any, child: AgentContext) -> None:
            try:
                results[i] = agent.run(task, child)
            except Exception as exc:  # noqa: BLE001 - a failing branch becomes a failed result
                results[i] = AgentResult(
                    agent=getattr(agent, "name", ""), ok=False, error=f"{type(exc).__name__}: {exc}"
                )

        children = [ctx.child(agent_name=getattr(a, "name", "agent"), depth=ctx.depth + 1) for a in self.agents]
        threads = [
            threading.Thread(target=branch, args=(i, a, c), name=f"edgevox-parallel-{self.name}-{i}", daemon=True)
            for i, (a, c) in enumerate(zip(self.agents, children, strict=True))
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for c in children:
            c.cancel_token.detach()
        done = [r if r is not None else AgentResult(ok=False, error="branch did not finish") for r in results]
        merged = self.reduce(done) if self.reduce else "\n".join(r.text for r in done if r.text)
        if isinstance(merged, AgentResult):
            out = merged
        elif isinstance(merged, str):
            out = AgentResult(
                agent=self.name,
                text=merged,
                ok=all(r.ok for r in done),
                error="; ".join(r.error for r in done if r.error),
                tool_calls=[tc for r in done for tc in r.tool_calls],
                skills=[s for r in done for s in r.skills],
            )
        else:
            raise AgentError(f"Parallel reduce returned {type(merged).__name__}; expected AgentResult or str")
        out.cancelled = out.cancelled or ctx.cancelled or any(r.cancelled for r in done)
        out.data["branches"] = done
        if out.text:
            yield ReplyDelta(agent=self.name, text=out.text)
        yield AgentReply(agent=self.name, text=out.text, ok=out.ok, cancelled=out.cancelled, error=out.error)
        return out
