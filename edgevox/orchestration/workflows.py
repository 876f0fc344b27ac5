"""Workflows: agents made of agents.

``Sequence``, ``Fallback``, ``Repeat``, ``Retry``, ``Timeout``, ``Router`` and
``Parallel`` are agents themselves (``stream``, and ``run`` derived from it), so they
nest, and they share the base and the child runner of the strategies
(:mod:`edgevox.orchestration.strategies`). Every child runs through
:func:`~edgevox.agents.run.stream_child`: in a context made by ``ctx.child(...)`` (the
same bus, blackboard, session, hooks and deps, and a child cancel token), so sub-agent
events reach the shared bus and cancelling the caller (barge-in, stop) cancels every
child, including parallel ones; a failing child becomes an ``ok=False`` result; the
caller's cancellation propagates as :class:`~edgevox.errors.Cancelled`.

``Timeout`` cancels only its *child* token: the caller's context is never cancelled
by a timeout, so later runs in it work (a pitfall of other frameworks).

Threads: everything runs on the caller's thread except ``Parallel`` (one named
thread per branch, all joined before it returns) and ``Timeout`` (one timer thread,
closed and joined before it returns).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping
from collections.abc import Sequence as Seq
from dataclasses import replace

from edgevox.agents.base import Agent, AgentBase, AgentResult, AgentStream, context_or_new
from edgevox.agents.decoders import NONE_CHOICE
from edgevox.agents.events import AgentReply, ReplyDelta
from edgevox.agents.grammar import choice_grammar
from edgevox.agents.run import child_name, run_parallel, stream_child
from edgevox.engines.base import LLM
from edgevox.errors import AgentError
from edgevox.runtime.context import AgentContext
from edgevox.runtime.events import Event

Run = Generator[Event, None, AgentResult]


class Workflow(AgentBase):
    """Base class of workflows and strategies: subclasses implement ``_run(task, ctx)``,
    a generator that yields events and returns the :class:`AgentResult`."""

    name = "workflow"
    description = ""

    def stream(self, task: str, ctx: AgentContext | None = None) -> AgentStream:
        return AgentStream(self._run(task, context_or_new(ctx)))

    def _run(self, task: str, ctx: AgentContext) -> Run:  # pragma: no cover - abstract
        raise NotImplementedError

    def close(self, timeout_s: float = 2.0) -> list[str]:
        """Wait for background work this workflow started; names of threads still running
        (none for most; the async ``Supervisor`` overrides it)."""
        return []

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


def _merged(name: str, steps: list[AgentResult], last: AgentResult) -> AgentResult:
    """``last`` (the child that spoke) with every step's tool calls and skills, and the steps."""
    return replace(
        last,
        tool_calls=[tc for s in steps for tc in s.tool_calls],
        skills=[sk for s in steps for sk in s.skills],
        steps=steps,
        data={**last.data, "workflow": name},
    )


class Sequence(Workflow):
    """Run agents one after another; each gets the previous reply as its task (``pass_output``)."""

    def __init__(self, agents: Seq[Agent], *, name: str = "sequence", pass_output: bool = True) -> None:
        if not agents:
            raise ValueError("Sequence needs at least one agent")
        self.agents, self.name, self.pass_output = list(agents), name, pass_output

    def _run(self, task: str, ctx: AgentContext) -> Run:
        steps: list[AgentResult] = []
        current = task
        for agent in self.agents:
            step = yield from stream_child(agent, current, ctx)
            steps.append(step)
            if not step.ok or step.cancelled:
                break
            if self.pass_output:
                current = step.text
        return _merged(self.name, steps, steps[-1])


class Fallback(Workflow):
    """Try agents in order; the first successful result wins."""

    def __init__(self, agents: Seq[Agent], *, name: str = "fallback") -> None:
        if not agents:
            raise ValueError("Fallback needs at least one agent")
        self.agents, self.name = list(agents), name

    def _run(self, task: str, ctx: AgentContext) -> Run:
        steps: list[AgentResult] = []
        for agent in self.agents:
            res = yield from stream_child(agent, task, ctx)
            steps.append(res)
            if res.ok and not res.cancelled:
                return _merged(self.name, steps, res)
        errors = "; ".join(s.error or f"{s.agent}: cancelled" for s in steps)
        return AgentResult(agent=self.name, ok=False, error=f"all fallbacks failed: {errors}", steps=steps)


class Repeat(Workflow):
    """Re-run ``agent`` on its own output until ``until(result)`` or ``max_iterations``.

    ``until=None`` runs exactly ``max_iterations`` times. (The review loop with
    reviewers is :class:`edgevox.orchestration.strategies.Loop`.)
    """

    def __init__(
        self,
        agent: Agent,
        until: Callable[[AgentResult], bool] | None = None,
        max_iterations: int = 3,
        *,
        name: str = "repeat",
    ) -> None:
        if max_iterations < 1:
            raise ValueError(f"Repeat max_iterations = {max_iterations}: must be >= 1")
        self.agent, self.until, self.max_iterations, self.name = agent, until, max_iterations, name

    def _run(self, task: str, ctx: AgentContext) -> Run:
        current = task
        steps: list[AgentResult] = []
        for i in range(1, self.max_iterations + 1):
            res = yield from stream_child(self.agent, current, ctx)
            steps.append(res)
            res.data["iterations"] = i
            if res.cancelled or not res.ok:
                return _merged(self.name, steps, res)
            if self.until is not None and self.until(res):
                res.data["done"] = True
                return _merged(self.name, steps, res)
            current = res.text
        steps[-1].data["done"] = False
        return _merged(self.name, steps, steps[-1])


DEFAULT_RETRY_ATTEMPTS = 2
"""Total attempts of a :class:`Retry` (and of a config workflow ``kind: retry``) unless given."""


class Retry(Workflow):
    """Re-run ``agent`` on failure (not on cancellation), up to ``attempts`` times."""

    def __init__(self, agent: Agent, attempts: int = DEFAULT_RETRY_ATTEMPTS, *, name: str = "retry") -> None:
        if attempts < 1:
            raise ValueError(f"Retry attempts = {attempts}: must be >= 1")
        self.agent, self.attempts, self.name = agent, attempts, name

    def _run(self, task: str, ctx: AgentContext) -> Run:
        steps: list[AgentResult] = []
        for i in range(1, self.attempts + 1):
            res = yield from stream_child(self.agent, task, ctx)
            steps.append(res)
            res.data["attempts"] = i
            if res.ok or res.cancelled:
                break
        return _merged(self.name, steps, steps[-1])


class Timeout(Workflow):
    """Cancel ``agent`` after ``timeout_s``; the result says it timed out. Never cancels the caller."""

    def __init__(self, agent: Agent, timeout_s: float, *, name: str = "timeout") -> None:
        if timeout_s <= 0:
            raise ValueError(f"Timeout timeout_s = {timeout_s}: must be > 0")
        self.agent, self.timeout_s, self.name = agent, timeout_s, name

    def _run(self, task: str, ctx: AgentContext) -> Run:
        res = yield from stream_child(self.agent, task, ctx, timeout_s=self.timeout_s)
        if res.timed_out:
            res.data["timed_out"] = True
        return _merged(self.name, [res], res)


class Router(Workflow):
    """Let the LLM pick one route (grammar-constrained to the route names), then run it.

    ``routes``: name -> agent; the prompt lists each route's ``description``. If the
    model picks ``none`` (or no LLM is needed because there is one route) the
    ``default`` route runs; without a default, ``none`` ends with an error result.
    """

    def __init__(
        self,
        routes: Mapping[str, Agent] | Seq[Agent],
        llm: LLM | None = None,
        *,
        instructions: str = "Pick the agent best suited to the user's request.",
        default: str | None = None,
        name: str = "router",
    ) -> None:
        if not isinstance(routes, Mapping):
            routes = {child_name(a): a for a in routes}
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
        ctx.cancel_token.raise_if_cancelled()
        if route is None:
            return AgentResult(agent=self.name, ok=False, error="no route fits the request and no default is set")
        res = yield from stream_child(self.routes[route], task, ctx)
        res.data["route"] = route
        return _merged(self.name, [res], res)


class Parallel(Workflow):
    """Run agents at once on threads (each through ``run_child``); ``reduce`` merges the results.

    ``reduce(results) -> AgentResult | str``; the default joins the replies with newlines.
    Cancelling the caller's context cancels every branch; the branches are still all
    joined and reported (``cancelled``) rather than abandoned. Events of the branches
    reach the bus from their threads; the stream yields the merged reply at the end.
    """

    def __init__(
        self,
        agents: Seq[Agent],
        *,
        reduce: Callable[[list[AgentResult]], AgentResult | str] | None = None,
        name: str = "parallel",
    ) -> None:
        if not agents:
            raise ValueError("Parallel needs at least one agent")
        self.agents, self.reduce, self.name = list(agents), reduce, name

    def _run(self, task: str, ctx: AgentContext) -> Run:
        jobs = [(a, task) for a in self.agents]
        done = run_parallel(jobs, ctx, thread_name=f"edgevox-parallel-{self.name}", unfinished="branch did not finish")
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
        out.steps = done
        out.data["branches"] = done
        if out.text:
            yield ReplyDelta(agent=self.name, text=out.text)
        yield AgentReply(agent=self.name, text=out.text, ok=out.ok, cancelled=out.cancelled, error=out.error)
        return out
