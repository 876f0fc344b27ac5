"""How the orchestration layer calls one agent and reads what it returned.

Strategies only need the agent protocol: an object with ``name`` and
``run(task, ctx)``. :func:`call_agent` runs it in a child context (made with
``ctx.child``, the one place contexts are made), turns whatever it returned into
an :class:`AgentOutcome`, and converts failures into ``ok=False`` outcomes so a
strategy can answer with what it has. :class:`~edgevox.errors.Cancelled` is not a
failure: it propagates, so a cancelled workflow stops and can keep its partial state.

With ``timeout_s`` the agent runs on a named worker thread; on timeout its child
cancel token is cancelled (the agent stops at its next check) and the outcome
says it timed out. The caller's own token is never touched.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from edgevox.errors import Cancelled
from edgevox.runtime.activities import track
from edgevox.runtime.context import AgentContext


@runtime_checkable
class AgentLike(Protocol):
    """The agent protocol the orchestration layer needs (see ``edgevox.agents``)."""

    name: str

    def run(self, task: str, ctx: AgentContext) -> Any: ...


@dataclass
class AgentOutcome:
    """What one agent call produced, normalised."""

    agent: str
    text: str
    ok: bool = True
    error: str = ""
    timed_out: bool = False
    duration_s: float = 0.0
    raw: Any = None
    """The agent's own result object (``AgentResult`` or whatever it returned)."""


def result_text(result: Any) -> str:
    """The reply text of an agent result (``AgentResult.text``/``output``/``reply``, or a str)."""
    if result is None:
        return ""
    if isinstance(result, str):
        return result
    for attr in ("text", "output", "reply", "content"):
        value = getattr(result, attr, None)
        if isinstance(value, str):
            return value
    if isinstance(result, dict):
        for key in ("text", "output", "reply"):
            if isinstance(result.get(key), str):
                return result[key]
    return str(result)


def result_error(result: Any) -> str:
    """The error an agent result reports ("" if it succeeded)."""
    if result is None or isinstance(result, str):
        return ""
    ok = getattr(result, "ok", None)
    error = getattr(result, "error", None)
    if ok is False:
        return str(error or "agent reported failure")
    return str(error) if error else ""


def agent_name(agent: Any) -> str:
    name = getattr(agent, "name", None)
    if not isinstance(name, str) or not name:
        raise TypeError(f"{agent!r} is not an agent: it needs a non-empty `name` and `run(task, ctx)`")
    if not callable(getattr(agent, "run", None)) and not callable(getattr(agent, "stream", None)):
        raise TypeError(f"agent {name!r} has neither run(task, ctx) nor stream(task, ctx)")
    return name


def run_agent(agent: Any, task: str, ctx: AgentContext) -> Any:
    """``agent.run(task, ctx)``; for stream-only agents (the voice ``ChatAgent``) the joined
    stream: an ``AgentStream``'s result, or the concatenated text pieces."""
    run = getattr(agent, "run", None)
    if callable(run):
        return run(task, ctx)
    stream = agent.stream(task, ctx)
    if callable(getattr(stream, "result", None)):
        return stream.result()
    return "".join(str(piece) for piece in stream)


def call_agent(
    agent: Any,
    task: str,
    ctx: AgentContext,
    *,
    timeout_s: float | None = None,
    **child_fields: Any,
) -> AgentOutcome:
    """Run ``agent`` on ``task`` in ``ctx.child(agent_name=..., **child_fields)``.

    Runs on the calling thread, or on a worker thread ``edgevox-call-<agent>`` when
    ``timeout_s`` is set. Raises :class:`Cancelled` if ``ctx`` was cancelled.
    """
    name = agent_name(agent)
    child = ctx.child(agent_name=name, **child_fields)
    started = time.monotonic()
    try:
        if timeout_s is None:
            return _run(agent, name, task, child, ctx, started)
        return _run_with_timeout(agent, name, task, child, ctx, started, timeout_s)
    finally:
        child.cancel_token.detach()


def _run(agent: Any, name: str, task: str, child: AgentContext, parent: AgentContext, started: float) -> AgentOutcome:
    parent.cancel_token.raise_if_cancelled()
    try:
        raw = run_agent(agent, task, child)
    except Cancelled:
        if parent.cancel_token.cancelled:
            raise
        return AgentOutcome(name, "", ok=False, error="cancelled", duration_s=time.monotonic() - started)
    except Exception as exc:  # noqa: BLE001 - a failing sub-agent becomes an outcome the caller reports
        return AgentOutcome(
            name, "", ok=False, error=f"{type(exc).__name__}: {exc}", duration_s=time.monotonic() - started
        )
    if parent.cancel_token.cancelled:
        raise Cancelled(parent.cancel_token.reason)
    error = result_error(raw)
    return AgentOutcome(
        name, result_text(raw), ok=not error, error=error, duration_s=time.monotonic() - started, raw=raw
    )


def _run_with_timeout(
    agent: Any, name: str, task: str, child: AgentContext, parent: AgentContext, started: float, timeout_s: float
) -> AgentOutcome:
    box: list[AgentOutcome | BaseException] = []
    done = threading.Event()

    def work() -> None:
        try:
            with track(child, "worker", f"call {name}", child.cancel_token):
                box.append(_run(agent, name, task, child, parent, started))
        except BaseException as exc:  # noqa: BLE001 - handed back to the calling thread
            box.append(exc)
        finally:
            done.set()

    thread = threading.Thread(target=work, name=f"edgevox-call-{name}", daemon=True)
    thread.start()
    # Wake on completion or on the caller's cancellation, whichever first.
    remove = parent.cancel_token.on_cancel(lambda _r: done.set())
    try:
        finished = done.wait(timeout_s)
    finally:
        remove()
    if not finished or not box:
        child.cancel_token.cancel(f"{name} timed out after {timeout_s:g} s")
        # Give a cooperative agent a moment to notice its token; never block the caller long.
        thread.join(min(1.0, timeout_s))
        parent.cancel_token.raise_if_cancelled()
        return AgentOutcome(
            name,
            "",
            ok=False,
            error=f"timed out after {timeout_s:g} s",
            timed_out=True,
            duration_s=time.monotonic() - started,
        )
    item = box[0]
    if isinstance(item, BaseException):
        raise item
    return item


def stream_call(
    agent: Any,
    task: str,
    ctx: AgentContext,
    *,
    timeout_s: float | None = None,
    **child_fields: Any,
) -> Generator[Any, None, AgentOutcome]:
    """:func:`call_agent` for the agent that speaks the answer: yields the agent's events
    (``ReplyDelta`` pieces as they are generated) and returns its :class:`AgentOutcome`.

    Use it as ``outcome = yield from stream_call(...)``. Same semantics as
    :func:`call_agent` (child context, failures become ``ok=False`` outcomes, the
    caller's cancellation raises :class:`Cancelled`), but the agent runs on the
    consuming thread so its reply can be spoken while it is generated. ``timeout_s``
    cancels the child's token from a timer (thread ``edgevox-timeout-<agent>``): the
    outcome then has ``timed_out`` and the text generated so far. An agent without
    ``stream`` is called with :func:`call_agent` and its answer yielded in one piece.
    Closing the generator (barge-in) closes the agent's stream.
    """
    from edgevox.agents.events import ReplyDelta

    name = agent_name(agent)
    if not callable(getattr(agent, "stream", None)):
        outcome = call_agent(agent, task, ctx, timeout_s=timeout_s, **child_fields)
        if outcome.text:
            yield ReplyDelta(source=name, text=outcome.text)
        return outcome
    ctx.cancel_token.raise_if_cancelled()
    child = ctx.child(agent_name=name, **child_fields)
    started = time.monotonic()
    timed_out = threading.Event()
    timer: threading.Timer | None = None
    if timeout_s is not None:

        def expire() -> None:
            timed_out.set()
            child.cancel_token.cancel(f"{name} timed out after {timeout_s:g} s")

        timer = threading.Timer(timeout_s, expire)
        timer.name, timer.daemon = f"edgevox-timeout-{name}", True
        timer.start()
    parts: list[str] = []

    def outcome_of(raw: Any, error: str = "") -> AgentOutcome:
        if timed_out.is_set() and not error:
            error = f"timed out after {timeout_s:g} s"
        text = result_text(raw) if raw is not None else "".join(parts)
        error = error or result_error(raw)
        return AgentOutcome(
            name,
            text,
            ok=not error,
            error=error,
            timed_out=timed_out.is_set(),
            duration_s=time.monotonic() - started,
            raw=raw,
        )

    run: Any = None
    try:
        run = agent.stream(task, child)
        for item in run:
            event = ReplyDelta(source=name, text=item) if isinstance(item, str) else item
            if isinstance(event, ReplyDelta):
                parts.append(event.text)
            yield event
        result = getattr(run, "result", None)
        raw = result() if callable(result) else "".join(parts)
    except Cancelled:
        if ctx.cancel_token.cancelled:
            raise
        return outcome_of(None, "" if timed_out.is_set() else "cancelled")
    except Exception as exc:  # noqa: BLE001 - a failing agent becomes an outcome the caller reports
        return outcome_of(None, f"{type(exc).__name__}: {exc}")
    finally:
        close = getattr(run, "close", None)
        if callable(close):
            close()
        if timer is not None:
            timer.cancel()
            timer.join(1.0)
        child.cancel_token.detach()
    if ctx.cancel_token.cancelled:
        raise Cancelled(ctx.cancel_token.reason)
    return outcome_of(raw)


def drain(gen: Generator[Any, None, Any]) -> Any:
    """Run a generator to its end, dropping what it yields; its return value."""
    while True:
        try:
            next(gen)
        except StopIteration as stop:
            return stop.value


def one_piece_stream(run: Callable[[], Any], source: str) -> Any:
    """An ``AgentStream`` for a composite that answers in one piece: one ``ReplyDelta``
    with the whole text, then the result (for the voice loop's ``text_deltas()``)."""
    from edgevox.agents.base import AgentStream
    from edgevox.agents.events import ReplyDelta

    def gen() -> Any:
        result = run()
        text = result_text(result)
        if text:
            yield ReplyDelta(source=source, text=text)
        return result

    return AgentStream(gen())
