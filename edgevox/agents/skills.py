"""Skills: long-running robot actions that return a :class:`GoalHandle` at once.

A skill is a tool whose body takes time ("drive to the kitchen"). Calling it starts
the body on a :class:`SkillExecutor` worker (a small, bounded thread pool owned by
whoever owns the agent) and returns a :class:`GoalHandle` immediately, so the agent
can answer ("going to the kitchen") while the robot moves, and so a stop can cancel
it mid-flight.

Goal states (an explicit lifecycle; a finished goal never changes again)::

    PENDING -> RUNNING -> SUCCEEDED | FAILED | CANCELLED
    PENDING -> CANCELLED              (cancelled before a worker picked it up)

The body receives the handle (a parameter annotated ``GoalHandle``) and must
cooperate: call ``goal.sleep(dt)`` / ``goal.check()`` between steps (they raise
:class:`~edgevox.errors.Cancelled` on cancel or timeout) and ``goal.publish_feedback``.
Cancellation is cooperative by design: killing a thread mid-motor-command is worse
than a late stop, and a body that polls every ~50 ms stops within that.

The contract for skill authors: **observe a cancel within 100 ms.** ``goal.sleep(dt)``
wakes at once on cancel; a body that computes or drives in steps calls ``goal.check()``
(or reads ``goal.cancelled``) at least every 100 ms. A safety stop waits 100 ms
(``activities.STOP_GRACE_S``) and then names every skill still running in the
``voice.stopped`` event as ignoring the cancel; whatever such a body returns later is
discarded (the goal ends ``cancelled``, never ``succeeded``), so nothing is spoken or
acted on after a stop. Every goal is registered with the runtime's
:class:`~edgevox.runtime.activities.ActivityRegistry` (``ctx.activities``), so a stop
reaches skills started by earlier turns, by ROS clients and by background agents.

Threads: the body runs on a worker thread named ``edgevox-skill-N``; ``cancel()`` may
be called from any thread; state-change events are published from the worker (or
from the cancelling thread for a goal that never started).
"""

from __future__ import annotations

import enum
import itertools
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from edgevox.agents.events import SkillStateEvent
from edgevox.agents.tools import Tool, build_tool
from edgevox.errors import Cancelled, LifecycleError, ToolExecutionError
from edgevox.runtime.context import AgentContext, CancelToken
from edgevox.runtime.speculation import DISCARD_REASON


class GoalState(enum.Enum):
    PENDING = "pending"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    CANCELLED = "cancelled"
    FAILED = "failed"

    @property
    def done(self) -> bool:
        return self in (GoalState.SUCCEEDED, GoalState.CANCELLED, GoalState.FAILED)


class GoalTimeout(Cancelled):
    """The goal ran past its ``timeout_s``."""


class GoalHandle:
    """A running (or finished) skill invocation."""

    def __init__(
        self,
        skill: str,
        token: CancelToken,
        *,
        timeout_s: float | None = None,
        ctx: AgentContext | None = None,
    ) -> None:
        self.skill = skill
        self.goal_id = uuid.uuid4().hex[:12]
        self.token = token
        self.timeout_s = timeout_s
        self._ctx = ctx
        self._cond = threading.Condition()
        self._state = GoalState.PENDING
        self._result: Any = None
        self._error = ""
        self._feedback: Any = None
        self._feedback_listeners: list[Callable[[Any], None]] = []
        self._deadline: float | None = None
        self._done_callbacks: list[Callable[[GoalHandle], None]] = []

    # -- observers -------------------------------------------------------------------------

    @property
    def state(self) -> GoalState:
        return self._state

    @property
    def done(self) -> bool:
        return self._state.done

    @property
    def feedback(self) -> Any:
        """The latest feedback the body published (``None`` before any)."""
        return self._feedback

    @property
    def error(self) -> str:
        return self._error

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the goal finishes; True if it did within ``timeout`` seconds."""
        with self._cond:
            return self._cond.wait_for(lambda: self._state.done, timeout)

    def result(self, timeout: float | None = None) -> Any:
        """The body's return value. Raises ``TimeoutError`` if not done in time,
        :class:`Cancelled` if cancelled, :class:`ToolExecutionError` if it failed."""
        if not self.wait(timeout):
            raise TimeoutError(f"skill {self.skill!r} goal {self.goal_id} still {self._state.value} after {timeout} s")
        if self._state is GoalState.CANCELLED:
            raise Cancelled(f"skill {self.skill!r} cancelled: {self._error or self.token.reason}")
        if self._state is GoalState.FAILED:
            raise ToolExecutionError(f"skill {self.skill!r} failed: {self._error}", tool=self.skill)
        return self._result

    def add_feedback_listener(self, fn: Callable[[Any], None]) -> None:
        self._feedback_listeners.append(fn)

    def add_done_callback(self, fn: Callable[[GoalHandle], None]) -> None:
        """``fn(handle)`` once the goal is done (at once if it already is)."""
        with self._cond:
            if not self._state.done:
                self._done_callbacks.append(fn)
                return
        fn(self)

    # -- control ---------------------------------------------------------------------------

    def cancel(self, reason: str = "cancelled") -> bool:
        """Ask the body to stop (it sees it at its next ``check``/``sleep``). False if already done."""
        if self._state.done:
            return False
        self.token.cancel(reason)
        # A goal no worker has picked up yet is finished here; a running one by its worker.
        self._finish(GoalState.CANCELLED, error=reason, only_if=GoalState.PENDING)
        return True

    # -- used by the skill body (worker thread) --------------------------------------------

    def check(self) -> None:
        """Raise :class:`Cancelled` if cancelled, :class:`GoalTimeout` past the deadline."""
        if self._deadline is not None and time.monotonic() >= self._deadline:
            self.token.cancel("timeout")
            raise GoalTimeout(f"skill {self.skill!r} timed out after {self.timeout_s} s")
        if self.token.cancelled:
            raise Cancelled(self.token.reason)

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` (waking at once on cancel), then :meth:`check`."""
        if self._deadline is not None:
            seconds = min(seconds, max(0.0, self._deadline - time.monotonic()))
        self.token.wait(seconds)
        self.check()

    @property
    def cancelled(self) -> bool:
        return self.token.cancelled

    def publish_feedback(self, feedback: Any) -> None:
        self._feedback = feedback
        for fn in list(self._feedback_listeners):
            fn(feedback)
        self._publish(feedback=feedback)

    # -- internals -------------------------------------------------------------------------

    def _start(self) -> bool:
        with self._cond:
            if self._state is not GoalState.PENDING:
                return False
            self._state = GoalState.RUNNING
            if self.timeout_s is not None:
                self._deadline = time.monotonic() + self.timeout_s
        self._publish()
        return True

    def _finish(self, state: GoalState, result: Any = None, error: str = "", only_if: GoalState | None = None) -> None:
        with self._cond:
            if self._state.done or (only_if is not None and self._state is not only_if):
                return
            self._state = state
            self._result = result
            self._error = error
            callbacks, self._done_callbacks = self._done_callbacks, []
            self._cond.notify_all()
        self.token.detach()
        self._publish(error=error)
        for fn in callbacks:
            try:
                fn(self)
            except Exception:  # noqa: BLE001 - one bad callback must not hide the outcome
                pass

    def _publish(self, feedback: Any = None, error: str = "") -> None:
        if self._ctx is not None:
            self._ctx.publish(
                SkillStateEvent(
                    skill=self.skill, goal_id=self.goal_id, state=self._state.value, feedback=feedback, error=error
                )
            )

    def __repr__(self) -> str:
        return f"GoalHandle({self.skill!r}, {self.goal_id}, {self._state.value})"


class SkillExecutor:
    """A bounded pool of named worker threads for skill bodies; ``shutdown()`` cancels and joins."""

    _ids = itertools.count(1)

    def __init__(self, max_workers: int = 2, name: str = "edgevox-skill") -> None:
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix=f"{name}-{next(self._ids)}")
        self._lock = threading.Lock()
        self._active: set[GoalHandle] = set()
        self._closed = False

    def submit(self, handle: GoalHandle, body: Callable[[], Any]) -> GoalHandle:
        with self._lock:
            if self._closed:
                raise LifecycleError("SkillExecutor is shut down; create a new one")
            self._active.add(handle)
        handle.add_done_callback(self._forget)
        # Registered with the runtime (not the turn that started it) so a safety stop from any
        # source reaches it; the activity ends when the body's thread really returns.
        registry = handle._ctx.activities if handle._ctx is not None else None
        activity = (
            registry.start("skill", handle.skill, handle.token, cancel=handle.cancel) if registry is not None else None
        )

        def run() -> None:
            try:
                if not handle._start():
                    return
                try:
                    value = body()
                except Cancelled as exc:
                    handle._finish(GoalState.CANCELLED, error=exc.reason)
                except Exception as exc:  # noqa: BLE001 - a failing body fails its goal, never the pool
                    handle._finish(GoalState.FAILED, error=f"{type(exc).__name__}: {exc}")
                else:
                    if handle.token.cancelled:
                        # The body ignored the cancel and finished anyway: its result is late and
                        # is never reported as success (nothing speaks or acts on it).
                        handle._finish(
                            GoalState.CANCELLED,
                            error=f"{handle.token.reason or 'cancelled'} (the skill ignored the cancel; "
                            "its late result was discarded)",
                        )
                    else:
                        handle._finish(GoalState.SUCCEEDED, result=value)
            finally:
                if activity is not None:
                    activity.finish()

        try:
            self._pool.submit(run)
        except BaseException:
            if activity is not None:
                activity.finish()
            raise
        return handle

    def _forget(self, handle: GoalHandle) -> None:
        with self._lock:
            self._active.discard(handle)

    @property
    def active(self) -> list[GoalHandle]:
        with self._lock:
            return list(self._active)

    def cancel_all(self, reason: str = "cancelled") -> int:
        handles = self.active
        for h in handles:
            h.cancel(reason)
        return len(handles)

    def shutdown(self, timeout_s: float = 5.0) -> bool:
        """Cancel running goals and join the workers; True if all finished in time."""
        with self._lock:
            self._closed = True
        handles = self.active
        for h in handles:
            h.cancel("shutdown")
        ok = all(h.wait(timeout_s) for h in handles)
        self._pool.shutdown(wait=ok, cancel_futures=True)
        return ok


class Skill:
    """A tool whose call starts a goal. Build with :func:`skill`."""

    def __init__(self, tool_: Tool, timeout_s: float | None, goal_param: str | None) -> None:
        self.tool = tool_
        self.timeout_s = timeout_s
        self.goal_param = goal_param
        self.name = tool_.name

    def start(self, arguments: dict[str, Any], ctx: AgentContext, executor: SkillExecutor) -> GoalHandle:
        """Validate (raises ToolArgumentError), then start on ``executor``; returns at once.

        The goal's token is a child of ``ctx.cancel_token``: cancelling the context cancels it.
        """
        kwargs = self.tool.validate(arguments)
        if not ctx.may_act():  # started on a guess that was discarded (or a stop came first)
            raise Cancelled(ctx.cancel_token.reason or DISCARD_REASON)
        handle = GoalHandle(self.name, ctx.cancel_token.child(f"skill:{self.name}"), timeout_s=self.timeout_s, ctx=ctx)
        if self.goal_param:
            kwargs[self.goal_param] = handle
        return executor.submit(handle, lambda: self.tool.call_validated(kwargs, ctx))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.tool.func(*args, **kwargs)


def skill(
    func: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    timeout_s: float | None = None,
    examples: Any = (),
) -> Any:
    """Decorator: ``@skill`` or ``@skill(timeout_s=30)`` -> :class:`Skill`."""

    def build(f: Callable[..., Any]) -> Skill:
        import inspect
        import typing

        hints = typing.get_type_hints(f)
        goal_param = next((p for p in inspect.signature(f).parameters if hints.get(p) is GoalHandle), None)
        t = build_tool(
            f, name=name, description=description, examples=examples, is_skill=True, skip_types=(GoalHandle,)
        )
        return Skill(t, timeout_s, goal_param)

    return build(func) if func is not None else build
