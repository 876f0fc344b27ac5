"""Tools: plain Python functions an agent may call, described by a JSON schema.

``@tool`` reads the function's type hints and its docstring (Google, NumPy or reST
style) and builds a :class:`Tool`: a name, a description, a JSON schema of the arguments
and the function.

A parameter with a default is optional; the default is recorded in the schema.
A parameter annotated ``AgentContext`` (or named ``ctx``) is injected by the agent
and never appears in the schema; neither does a ``GoalHandle`` parameter of a skill.

An exception raised *inside* the tool is a :class:`~edgevox.errors.ToolExecutionError`
(a tool failure), never a :class:`~edgevox.errors.ToolArgumentError`.

Modules: this one is the tool (:class:`Tool`, ``@tool``, :class:`ToolBox`, a call run under a
deadline); :mod:`~edgevox.agents.tool_schema` reads the schema from the annotations (the
supported ones are listed there), :mod:`~edgevox.agents.tool_validation` checks arguments
against it (strictly, with the error messages), and :mod:`~edgevox.agents.tool_result`
defines :class:`ToolCall` and :class:`ToolResult`, importable from here too.
"""

from __future__ import annotations

import inspect
import threading
import types
import typing
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Union, get_args, get_origin

from edgevox.agents.tool_result import ToolCall, ToolResult, safe_str
from edgevox.agents.tool_schema import jsonable_default, parse_docstring, schema_for, strip_annotated, with_doc
from edgevox.agents.tool_validation import show_value, validate_value
from edgevox.errors import Cancelled, ToolArgumentError, ToolExecutionError
from edgevox.runtime.speculation import DISCARD_REASON

if TYPE_CHECKING:
    from edgevox.runtime.context import AgentContext, CancelToken

_MISSING = object()


@dataclass(frozen=True)
class Tool:
    """A callable tool. Build with :func:`tool`; call through :meth:`invoke`."""

    name: str
    description: str
    parameters: dict[str, Any]
    """JSON schema (``type: object``) of the arguments."""
    func: Callable[..., Any]
    context_param: str | None = None
    """Name of the parameter that receives the :class:`AgentContext`, if any."""
    examples: tuple[tuple[str, dict[str, Any] | None], ...] = ()
    """Few-shot examples ``(utterance, arguments)`` written by the tool's author."""
    is_skill: bool = False
    converters: Mapping[str, Callable[[Any], Any]] = field(default_factory=dict)
    timeout_s: float | None = None
    """Deadline of one call in seconds (``@tool(timeout_s=...)``); None = the agent's default."""
    is_async: bool = False
    """The function is ``async def``: each call runs it on its own event loop (see :meth:`call_validated`)."""

    def validate(self, arguments: Any) -> dict[str, Any]:
        """Check ``arguments`` against the schema; return them with defaults filled and
        nested objects converted (dataclasses). Raises :class:`ToolArgumentError`."""
        if not isinstance(arguments, Mapping):
            raise ToolArgumentError(
                f"tool {self.name!r}: arguments must be an object, got {show_value(arguments)}", tool=self.name
            )
        checked = validate_value(self.parameters, dict(arguments), tool=self.name, path="")
        out: dict[str, Any] = {}
        for pname, prop in self.parameters.get("properties", {}).items():
            if pname in checked:
                value = checked[pname]
                conv = self.converters.get(pname)
                out[pname] = conv(value) if conv else value
            elif "default" in prop:
                out[pname] = prop["default"]
        return out

    def invoke(
        self,
        arguments: Any,
        ctx: AgentContext | None = None,
        *,
        call_id: str | None = None,
        timeout_s: float | None = None,
    ) -> ToolResult:
        """Validate and run; never raises for bad arguments or tool failures (they become results).

        With a deadline (``timeout_s``, or the tool's own ``timeout_s`` which wins) or a context
        whose token can be cancelled, the call runs on its own thread (``edgevox-tool-<name>``)
        registered with ``ctx.activities``, and the caller waits for whichever comes first:
        the result, the deadline (``error_kind="timeout"``) or a cancel (``"cancelled"``).
        A call that misses its deadline or ignores the cancel keeps its thread until it
        returns (the registry names it), and its late result is discarded: a robot never
        acts on, or speaks, what a tool returns after a stop or a timeout.
        """
        call = ToolCall(
            self.name, dict(arguments) if isinstance(arguments, Mapping) else {}, call_id or uuid.uuid4().hex[:12]
        )
        try:
            kwargs = self.validate(arguments)
        except ToolArgumentError as exc:
            return ToolResult(call, ok=False, error=str(exc), error_kind="arguments")
        if ctx is not None and not ctx.may_act():  # waits out a speculative turn
            # Decided on a guess (a speculative transcript) that was then discarded: never act.
            return ToolResult(
                call, ok=False, error=f"tool {self.name!r} not run: {DISCARD_REASON}", error_kind="cancelled"
            )
        deadline = self.timeout_s if self.timeout_s is not None else timeout_s
        if deadline is None and ctx is None:
            return self._result(call, lambda: self.call_validated(kwargs, ctx))
        return _run_with_deadline(self, call, kwargs, ctx, deadline)

    def _result(self, call: ToolCall, run: Callable[[], Any]) -> ToolResult:
        try:
            value = run()
        except Cancelled as exc:
            return ToolResult(
                call, ok=False, error=f"tool {self.name!r} cancelled: {exc.reason}", error_kind="cancelled"
            )
        except ToolExecutionError as exc:
            return ToolResult(call, ok=False, error=str(exc), error_kind="execution")
        return ToolResult(call, ok=True, value=value)

    def call_validated(self, kwargs: dict[str, Any], ctx: AgentContext | None = None) -> Any:
        """Run with already validated arguments; an exception inside becomes ToolExecutionError.

        An ``async def`` tool runs to completion on a fresh event loop in the calling thread;
        cancelling ``ctx.cancel_token`` cancels the coroutine (``asyncio.CancelledError``
        inside it, :class:`Cancelled` here)."""
        if self.context_param:
            kwargs = {**kwargs, self.context_param: ctx}
        try:
            if self.is_async:
                return _run_coroutine(self.func(**kwargs), ctx.cancel_token if ctx is not None else None)
            value = self.func(**kwargs)
            if inspect.isawaitable(value):  # a plain function that returned a coroutine: await it
                return _run_coroutine(value, ctx.cancel_token if ctx is not None else None)
            return value
        except (Cancelled, ToolExecutionError):
            raise
        except Exception as exc:  # noqa: BLE001 - any failure inside a tool is a tool failure
            raise ToolExecutionError(
                f"tool {self.name!r} failed: {type(exc).__name__}: {safe_str(exc)}", tool=self.name
            ) from exc
        except SystemExit as exc:  # a tool never ends the process
            raise ToolExecutionError(f"tool {self.name!r} called sys.exit({exc.code!r})", tool=self.name) from exc
        except KeyboardInterrupt as exc:
            if threading.current_thread() is threading.main_thread():
                raise  # Ctrl-C while the tool ran in the caller's thread: the user's, not the tool's
            raise ToolExecutionError(f"tool {self.name!r} raised KeyboardInterrupt", tool=self.name) from exc

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the underlying function directly (no validation), as plain Python."""
        return self.func(*args, **kwargs)

    @property
    def required(self) -> list[str]:
        return list(self.parameters.get("required", []))

    def spec(self) -> dict[str, Any]:
        """OpenAI-style function spec (``{"name", "description", "parameters"}``)."""
        return {"name": self.name, "description": self.description, "parameters": self.parameters}


# --- building schemas ---------------------------------------------------------------------


def tool(
    func: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    examples: typing.Sequence[tuple[str, dict[str, Any] | None]] = (),
    timeout_s: float | None = None,
) -> Any:
    """Decorator: ``@tool`` or ``@tool(name=..., description=..., examples=..., timeout_s=...)`` -> :class:`Tool`.

    ``examples`` are ``(utterance, arguments)`` pairs used as few-shot prompts; write them
    from the schema, they are not test data. ``timeout_s`` is this tool's deadline per call
    (default: the agent's ``tool_timeout_s``, from ``safety.tool_timeout_s`` in a config).
    ``async def`` functions are supported; async generators are rejected.
    """

    def build(f: Callable[..., Any]) -> Tool:
        return build_tool(f, name=name, description=description, examples=examples, timeout_s=timeout_s)

    return build(func) if func is not None else build


def build_tool(
    func: Callable[..., Any],
    *,
    name: str | None = None,
    description: str | None = None,
    examples: typing.Sequence[tuple[str, dict[str, Any] | None]] = (),
    is_skill: bool = False,
    skip_types: tuple[type, ...] = (),
    timeout_s: float | None = None,
) -> Tool:
    """Build a :class:`Tool` from a function (what ``@tool`` and ``@skill`` use)."""
    from edgevox.runtime.context import AgentContext

    where = f"tool {name or getattr(func, '__name__', func)!r}"
    if inspect.isasyncgenfunction(func) or inspect.isgeneratorfunction(func):
        raise TypeError(f"{where}: generator functions cannot be tools; return the value instead of yielding it")
    if timeout_s is not None and not (isinstance(timeout_s, (int, float)) and 0 < timeout_s < 86400):
        raise TypeError(f"{where}: timeout_s = {timeout_s!r}: must be a number of seconds > 0 and < 86400")

    summary, arg_docs = parse_docstring(inspect.getdoc(func) or "")
    hints = typing.get_type_hints(func, include_extras=True)
    sig = inspect.signature(func)
    properties: dict[str, Any] = {}
    required: list[str] = []
    converters: dict[str, Callable[[Any], Any]] = {}
    context_param = None
    tool_name = name or func.__name__
    for pname, param in sig.parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(f"tool {tool_name!r}: *args/**kwargs are not supported (parameter {pname!r})")
        hint = hints.get(pname, Any)
        base = strip_annotated(hint)[0]
        if get_origin(base) in (Union, types.UnionType):
            members = [m for m in get_args(base) if m is not type(None)]
            base = members[0] if len(members) == 1 else base
        if base is AgentContext or (pname == "ctx" and hint is Any):
            context_param = pname
            continue
        if isinstance(base, type) and skip_types and issubclass(base, skip_types):
            continue
        if hint is Any:
            raise TypeError(f"tool {tool_name!r}: parameter {pname!r} needs a type annotation")
        schema, conv = schema_for(hint, where=f"tool {tool_name!r} parameter {pname!r}")
        if pname in arg_docs:
            schema = with_doc(schema, arg_docs[pname])
        if param.default is not inspect.Parameter.empty:
            schema = {**schema, "default": jsonable_default(param.default)}
        else:
            required.append(pname)
        properties[pname] = schema
        if conv is not None:
            converters[pname] = conv
    parameters: dict[str, Any] = {"type": "object", "properties": properties, "required": required}
    parameters["additionalProperties"] = False
    return Tool(
        name=tool_name,
        description=description or summary or tool_name,
        parameters=parameters,
        func=func,
        context_param=context_param,
        examples=tuple((str(t), None if a is None else dict(a)) for t, a in examples),
        is_skill=is_skill,
        converters=converters,
        timeout_s=None if timeout_s is None else float(timeout_s),
        is_async=inspect.iscoroutinefunction(func),
    )


def fill_defaults(tool_: Tool, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """``arguments`` with the tool's declared defaults added (no validation)."""
    out = dict(arguments)
    for pname, prop in tool_.parameters.get("properties", {}).items():
        if pname not in out and "default" in prop:
            out[pname] = prop["default"]
    return out


class ToolBox:
    """An ordered, name-unique set of tools (what an agent can call)."""

    def __init__(self, tools: typing.Iterable[Tool | Callable[..., Any]] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for t in tools:
            self.add(t)

    def add(self, t: Tool | Callable[..., Any]) -> Tool:
        if not isinstance(t, Tool):
            t = build_tool(t)
        if t.name in self._tools:
            raise ValueError(f"two tools are named {t.name!r}; tool names must be unique")
        self._tools[t.name] = t
        return t

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> typing.Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    @property
    def names(self) -> list[str]:
        return list(self._tools)


# --- running a call with a deadline -------------------------------------------------------------


def _run_with_deadline(
    t: Tool, call: ToolCall, kwargs: dict[str, Any], ctx: AgentContext | None, deadline_s: float | None
) -> ToolResult:
    """Run ``t`` on its own registered thread; wait for the result, the deadline or a cancel."""
    import threading

    from edgevox.runtime.activities import start_activity
    from edgevox.runtime.context import CancelToken

    token = ctx.cancel_token.child(f"tool:{t.name}") if ctx is not None else CancelToken(f"tool:{t.name}")
    tool_ctx = ctx.child(cancel_token=token) if ctx is not None else None
    box: list[ToolResult] = []
    finished = threading.Event()

    def work() -> None:
        try:
            result = t._result(call, lambda: t.call_validated(kwargs, tool_ctx))
            if not activity.stale and not token.cancelled:
                box.append(result)
        finally:
            activity.finish()
            token.detach()
            finished.set()

    if token.cancelled:
        token.detach()
        return ToolResult(call, ok=False, error=f"tool {t.name!r} cancelled: {token.reason}", error_kind="cancelled")
    activity = start_activity(ctx, "tool", t.name, token)  # registered before the call can be seen
    thread = threading.Thread(target=work, name=f"edgevox-tool-{t.name}", daemon=True)
    remove = token.on_cancel(lambda _r: finished.set())
    thread.start()
    try:
        done = finished.wait(deadline_s)
    finally:
        remove()
    if done and box:
        return box[0]
    if done or token.cancelled:
        reason = token.reason or "cancelled"
        late = " (it ignored the cancel; its late result will be discarded)" if thread.is_alive() else ""
        token.cancel(reason)
        return ToolResult(call, ok=False, error=f"tool {t.name!r} cancelled: {reason}{late}", error_kind="cancelled")
    token.cancel(f"timeout after {deadline_s:g} s")
    return ToolResult(
        call,
        ok=False,
        error=f"tool {t.name!r} timed out after {deadline_s:g} s; its late result will be discarded",
        error_kind="timeout",
    )


def _cancel_soon(loop: Any, task: Any) -> None:
    loop.call_soon_threadsafe(task.cancel)


def _run_coroutine(coro: Any, token: CancelToken | None) -> Any:
    """Run ``coro`` on a fresh event loop in this thread; a cancelled ``token`` cancels it."""
    import asyncio

    async def main() -> Any:
        task = asyncio.ensure_future(coro)
        loop = asyncio.get_running_loop()
        remove = token.on_cancel(lambda _r: _cancel_soon(loop, task)) if token is not None else None
        try:
            return await task
        except asyncio.CancelledError:
            raise Cancelled((token.reason if token is not None else "") or "cancelled") from None
        finally:
            if remove is not None:
                remove()

    return asyncio.run(main())
