"""Tools: plain Python functions an agent may call, described by a JSON schema.

``@tool`` reads the function's type hints and its Google-style docstring and
builds a :class:`Tool`: a name, a description, a JSON schema of the arguments
and the function. Supported annotations:

- ``str``, ``int``, ``float``, ``bool`` -> ``string``, ``integer``, ``number``, ``boolean``
- ``Literal["a", "b"]`` -> ``enum`` (with the type of the values)
- ``X | None`` / ``Optional[X]`` -> ``anyOf [X, null]``
- ``list[X]`` / ``tuple[X, ...]`` -> ``array`` of X; ``dict[str, X]`` -> object with ``additionalProperties``
- dataclasses and ``TypedDict`` -> nested ``object`` (validated values become the dataclass)
- ``Annotated[X, "description"]`` -> X with a description
- ``Annotated[float, Field(ge=-5, le=5)]`` (pydantic ``Field`` or ``annotated_types``
  ``Ge/Gt/Le/Lt/Interval``) -> ``minimum``/``maximum`` (``exclusiveMinimum``/``exclusiveMaximum``);
  a docstring range does the same: "-5 to 5", "between 0 and 100", "(0-100)"

A parameter with a default is optional; the default is recorded in the schema.
A parameter annotated ``AgentContext`` (or named ``ctx``) is injected by the agent
and never appears in the schema; neither does a ``GoalHandle`` parameter of a skill.

Validation is strict on purpose (small models make small mistakes, and a robot must
not guess): ``True`` is not an integer or a number, unknown keys are rejected, enum
values are checked, ``NaN`` and infinities are never a number, bounds are enforced,
and each error names the tool, the argument (dotted path for nested values), what
was expected and what came::

    tool 'move' argument 'distance_m': expected number, got 'far'
    tool 'move' argument 'distance_m': expected a finite number, got nan
    tool 'move' argument 'distance_m': expected a number <= 5 (maximum), got 7

An exception raised *inside* the tool is a :class:`~edgevox.errors.ToolExecutionError`
(a tool failure), never a :class:`~edgevox.errors.ToolArgumentError`.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import re
import threading
import types
import typing
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Union, get_args, get_origin

from edgevox.errors import Cancelled, ToolArgumentError, ToolExecutionError
from edgevox.runtime.speculation import DISCARD_REASON

_MISSING = object()


@dataclass(frozen=True)
class ToolCall:
    """One call the model asked for."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])


@dataclass
class ToolResult:
    """What came of a :class:`ToolCall`.

    ``error_kind`` is ``"arguments"`` (bad arguments), ``"execution"`` (the tool raised),
    ``"timeout"`` (it missed its deadline),
    ``"unknown_tool"``, ``"cancelled"``, or ``""`` when ``ok``.
    """

    call: ToolCall
    ok: bool
    value: Any = None
    error: str = ""
    error_kind: str = ""

    def as_text(self) -> str:
        """The result as the model sees it (at most :data:`MAX_RESULT_CHARS`, whatever the value)."""
        if self.ok:
            return value_in_words(self.value)
        return f"error: {self.error}"


MAX_RESULT_CHARS = 1000
"""A tool's result is cut to this many characters for the model, events and speech: a tool
that returns a log dump must not fill the context window or talk for an hour."""


def value_in_words(value: Any, limit: int = MAX_RESULT_CHARS) -> str:
    """A tool's value as plain words (no JSON/repr braces for a model to copy), at most ``limit``
    characters. Never raises: nested or self-containing values are cut, and a value whose
    ``str`` fails is named by its type."""
    parts: list[str] = []
    size = 0
    seen: set[int] = set()

    def add(text: str) -> bool:
        nonlocal size
        parts.append(text)
        size += len(text)
        return size < limit

    def walk(v: Any, depth: int) -> bool:
        if isinstance(v, str):
            return add(v.strip())
        if v is None:
            return add("nothing")
        if isinstance(v, (dict, list, tuple, set, frozenset)):
            if id(v) in seen or depth > 4:
                return add("...")
            seen.add(id(v))
            items = list(v.items()) if isinstance(v, dict) else list(v)
            for i, item in enumerate(items):
                if i and not add(", "):
                    return False
                if isinstance(v, dict):
                    key, item = item
                    if not add(f"{_safe_str(key)}: "):
                        return False
                if not walk(item, depth + 1):
                    return False
            return True
        return add(_safe_str(v))

    walk(value, 0)
    text = "".join(parts)
    if len(text) <= limit:
        return text
    cut = text[:limit]
    end = max(cut.rfind(". "), cut.rfind("! "), cut.rfind("? "))
    cut = cut[: end + 1] if end > limit // 2 else cut.rsplit(" ", 1)[0]
    return f"{cut} ..."


def _safe_str(value: Any) -> str:
    try:
        text = str(value)
    except Exception:  # noqa: BLE001 - a value whose __str__ fails is named by its type
        return f"a {type(value).__name__} value"
    return text if len(text) <= 4 * MAX_RESULT_CHARS else text[: 4 * MAX_RESULT_CHARS]


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
                f"tool {self.name!r}: arguments must be an object, got {_show(arguments)}", tool=self.name
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
        self, arguments: Any, ctx: Any = None, *, call_id: str | None = None, timeout_s: float | None = None
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
        may_act = getattr(ctx, "may_act", None)  # AgentContext.may_act: waits out a speculative turn
        if may_act is not None and not may_act():
            # Decided on a guess (a speculative transcript) that was then discarded: never act.
            return ToolResult(
                call, ok=False, error=f"tool {self.name!r} not run: {DISCARD_REASON}", error_kind="cancelled"
            )
        deadline = self.timeout_s if self.timeout_s is not None else timeout_s
        token = getattr(ctx, "cancel_token", None)
        if deadline is None and token is None:
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

    def call_validated(self, kwargs: dict[str, Any], ctx: Any = None) -> Any:
        """Run with already validated arguments; an exception inside becomes ToolExecutionError.

        An ``async def`` tool runs to completion on a fresh event loop in the calling thread;
        cancelling ``ctx.cancel_token`` cancels the coroutine (``asyncio.CancelledError``
        inside it, :class:`Cancelled` here)."""
        if self.context_param:
            kwargs = {**kwargs, self.context_param: ctx}
        try:
            if self.is_async:
                return _run_coroutine(self.func(**kwargs), getattr(ctx, "cancel_token", None))
            value = self.func(**kwargs)
            if inspect.isawaitable(value):  # a plain function that returned a coroutine: await it
                return _run_coroutine(value, getattr(ctx, "cancel_token", None))
            return value
        except (Cancelled, ToolExecutionError):
            raise
        except Exception as exc:  # noqa: BLE001 - any failure inside a tool is a tool failure
            raise ToolExecutionError(
                f"tool {self.name!r} failed: {type(exc).__name__}: {_safe_str(exc)}", tool=self.name
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
        base = _strip_annotated(hint)[0]
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
            schema = _with_doc(schema, arg_docs[pname])
        if param.default is not inspect.Parameter.empty:
            schema = {**schema, "default": _jsonable_default(param.default)}
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


_ARGS_HEADERS = ("args:", "arguments:", "parameters:")
_SECTION_RE = re.compile(r"^(returns|raises|yields|examples?|notes?|attributes):\s*$", re.I)
_ARG_LINE_RE = re.compile(r"^(\*{0,2}\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")


def parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into (description, {arg: description})."""
    lines = doc.splitlines()
    summary: list[str] = []
    args: dict[str, str] = {}
    i = 0
    while i < len(lines) and lines[i].strip().lower() not in _ARGS_HEADERS and not _SECTION_RE.match(lines[i].strip()):
        summary.append(lines[i].strip())
        i += 1
    if i < len(lines) and lines[i].strip().lower() in _ARGS_HEADERS:
        i += 1
        current = None
        base_indent = None
        while i < len(lines):
            raw = lines[i]
            if not raw.strip():
                i += 1
                continue
            indent = len(raw) - len(raw.lstrip())
            if base_indent is None:
                base_indent = indent
            if indent < base_indent or _SECTION_RE.match(raw.strip()):
                break
            m = _ARG_LINE_RE.match(raw.strip())
            if indent == base_indent and m:
                current = m.group(1).lstrip("*")
                args[current] = m.group(3).strip()
            elif current is not None:
                args[current] = (args[current] + " " + raw.strip()).strip()
            i += 1
    text = " ".join(s for s in summary if s).strip()
    return text, args


_NUM = r"(-?\d+(?:\.\d+)?)"
_DOC_RANGES = (
    re.compile(rf"\bbetween\s+{_NUM}\s+and\s+{_NUM}(?!\w|\.\d)", re.IGNORECASE),
    re.compile(rf"(?:^|(?<=[\s,;:(]))(?:from\s+)?{_NUM}\s+to\s+{_NUM}(?!\w|\.\d)", re.IGNORECASE),
    re.compile(rf"\(\s*{_NUM}\s*(?:-|\u2013|\.\.)\s*{_NUM}\s*[a-z%\u00b0/]*\s*\)", re.IGNORECASE),
)
"""Ranges read from a parameter's docstring: "-5 to 5", "from 0 to 10", "between 0 and 100",
"(0-100)", "(0-100 %)". Conservative: one range only, low < high, else none is read."""


def docstring_bounds(description: str) -> dict[str, float | int]:
    """``{"minimum": lo, "maximum": hi}`` from a range in ``description``, or ``{}``."""
    found = {(m.group(1), m.group(2)) for rx in _DOC_RANGES for m in rx.finditer(description)}
    if len(found) != 1:
        return {}  # none, or two different ranges: do not guess
    lo, hi = (_number(x) for x in found.pop())
    return {"minimum": lo, "maximum": hi} if lo < hi else {}


def _number(text: str) -> float | int:
    return float(text) if "." in text else int(text)


_BOUND_KEYS = {"ge": "minimum", "gt": "exclusiveMinimum", "le": "maximum", "lt": "exclusiveMaximum"}
_NUMERIC = ("number", "integer")


def _with_bounds(schema: dict[str, Any], bounds: dict[str, Any], where: str, *, strict: bool) -> dict[str, Any]:
    """``schema`` with numeric ``bounds`` (on the numeric members of an ``anyOf``). A bound on a
    non-numeric type is a TypeError when ``strict`` (an annotation), ignored otherwise (a docstring)."""
    if not bounds:
        return schema
    if schema.get("type") in _NUMERIC and "enum" not in schema:
        return {**schema, **bounds}
    if "anyOf" in schema and any(s.get("type") in _NUMERIC for s in schema["anyOf"]):
        members = [{**s, **bounds} if s.get("type") in _NUMERIC and "enum" not in s else s for s in schema["anyOf"]]
        return {**schema, "anyOf": members}
    if strict:
        raise TypeError(f"{where}: bounds ({', '.join(bounds)}) need an int or float parameter")
    return schema


def _with_doc(schema: dict[str, Any], doc: str) -> dict[str, Any]:
    """A parameter's docstring line: its description (unless the annotation gave one) and its range
    (unless the annotation gave bounds)."""
    if "description" not in schema:
        schema = {**schema, "description": doc}
    has_bounds = any(k in s for s in (schema, *schema.get("anyOf", ())) for k in _BOUND_KEYS.values())
    return schema if has_bounds else _with_bounds(schema, docstring_bounds(doc), "", strict=False)


def _strip_annotated(hint: Any) -> tuple[Any, str | None]:
    if get_origin(hint) is typing.Annotated:
        base, *meta = get_args(hint)
        desc = next((m for m in meta if isinstance(m, str)), None)
        return base, desc
    return hint, None


def _annotated_bounds(hint: Any) -> dict[str, Any]:
    """JSON-schema bounds from ``Annotated`` metadata: pydantic ``Field(ge=..)`` (whose ``metadata``
    holds ``annotated_types`` objects) or ``annotated_types.Ge/Gt/Le/Lt/Interval`` directly.
    Duck-typed, so neither library is needed here."""
    if get_origin(hint) is not typing.Annotated:
        return {}
    out: dict[str, Any] = {}
    for meta in get_args(hint)[1:]:
        if isinstance(meta, str):
            continue
        for item in (meta, *getattr(meta, "metadata", ())):
            for attr, key in _BOUND_KEYS.items():
                value = getattr(item, attr, None)
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    if not math.isfinite(value):
                        raise TypeError(f"bound {attr}={value!r} must be a finite number")
                    out[key] = value
    return out


def _is_typeddict(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, dict) and hasattr(tp, "__required_keys__")


def schema_for(hint: Any, *, where: str) -> tuple[dict[str, Any], Callable[[Any], Any] | None]:
    """JSON schema for a type hint, plus a converter for validated values (or None)."""
    bounds = _annotated_bounds(hint)
    hint, desc = _strip_annotated(hint)
    schema, conv = _schema_for(hint, where)
    schema = _with_bounds(schema, bounds, where, strict=True)
    if desc:
        schema = {**schema, "description": desc}
    return schema, conv


def _schema_for(hint: Any, where: str) -> tuple[dict[str, Any], Callable[[Any], Any] | None]:
    origin = get_origin(hint)
    if hint is str:
        return {"type": "string"}, None
    if hint is bool:
        return {"type": "boolean"}, None
    if hint is int:
        return {"type": "integer"}, None
    if hint is float:
        return {"type": "number"}, None
    if hint is type(None):
        return {"type": "null"}, None
    if origin is Literal:
        values = list(get_args(hint))
        kinds = {_json_type(v) for v in values}
        schema: dict[str, Any] = {"enum": values}
        if len(kinds) == 1:
            schema = {"type": kinds.pop(), "enum": values}
        return schema, None
    if origin in (Union, types.UnionType):
        members = get_args(hint)
        parts = [schema_for(m, where=where) for m in members]
        convs = {i: c for i, (_, c) in enumerate(parts) if c is not None}
        schemas = [s for s, _ in parts]
        conv = None
        if convs:
            # Only a nested object member needs converting; dicts are unambiguous there.
            obj_conv = next(iter(convs.values()))

            def conv(v: Any, _c: Callable[[Any], Any] = obj_conv) -> Any:
                return _c(v) if isinstance(v, dict) else v

        return {"anyOf": schemas}, conv
    if origin in (list, tuple, typing.List, typing.Tuple) or hint in (list, tuple):  # noqa: UP006
        args = get_args(hint)
        if origin in (tuple, typing.Tuple) and args and (len(args) != 2 or args[1] is not Ellipsis):  # noqa: UP006
            raise TypeError(f"{where}: fixed-length tuples are not supported; use tuple[X, ...] or list[X]")
        item_hint = args[0] if args else Any
        if item_hint is Any:
            raise TypeError(f"{where}: list needs an item type, e.g. list[str]")
        item_schema, item_conv = schema_for(item_hint, where=where)
        conv = None
        if item_conv is not None:

            def conv(v: Any, _c: Callable[[Any], Any] = item_conv) -> Any:
                return [_c(x) for x in v]

        return {"type": "array", "items": item_schema}, conv
    if origin in (dict, typing.Dict):  # noqa: UP006
        key, value = get_args(hint) or (str, Any)
        if key is not str or value is Any:
            raise TypeError(f"{where}: dict must be dict[str, X]")
        value_schema, _ = schema_for(value, where=where)
        return {"type": "object", "additionalProperties": value_schema}, None
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return _object_schema(hint, where, is_dataclass=True)
    if _is_typeddict(hint):
        return _object_schema(hint, where, is_dataclass=False)
    raise TypeError(f"{where}: unsupported annotation {hint!r}; use str, int, float, bool, Literal, list, dataclass")


def _object_schema(tp: type, where: str, *, is_dataclass: bool) -> tuple[dict[str, Any], Callable[[Any], Any]]:
    hints = typing.get_type_hints(tp, include_extras=True)
    _, field_docs = parse_docstring(inspect.getdoc(tp) or "")
    properties: dict[str, Any] = {}
    required: list[str] = []
    convs: dict[str, Callable[[Any], Any]] = {}
    if is_dataclass:
        for f in dataclasses.fields(tp):
            schema, conv = schema_for(hints[f.name], where=f"{where} field {f.name!r}")
            if f.default is not dataclasses.MISSING:
                schema = {**schema, "default": _jsonable_default(f.default)}
            elif f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
                pass
            else:
                required.append(f.name)
            if f.name in field_docs:
                schema.setdefault("description", field_docs[f.name])
            properties[f.name] = schema
            if conv:
                convs[f.name] = conv
    else:
        req = getattr(tp, "__required_keys__", frozenset())
        for fname, fhint in hints.items():
            schema, conv = schema_for(fhint, where=f"{where} field {fname!r}")
            properties[fname] = schema
            if fname in req:
                required.append(fname)
            if conv:
                convs[fname] = conv

    def convert(value: dict[str, Any]) -> Any:
        data = {k: convs[k](v) if k in convs else v for k, v in value.items()}
        return tp(**data) if is_dataclass else data

    schema = {"type": "object", "properties": properties, "required": required, "additionalProperties": False}
    return schema, convert


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    raise TypeError(f"unsupported enum value {value!r}")


def _jsonable_default(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, tuple):
        return list(value)
    return value


# --- validation ---------------------------------------------------------------------------


def _show(value: Any) -> str:
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (dict, list)):
        return f"{type(value).__name__} {value!r}"[:80]
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}...({len(text)} characters)"


def _describe(schema: dict[str, Any]) -> str:
    if "enum" in schema:
        return "one of " + ", ".join(_show(v) for v in schema["enum"])
    if "anyOf" in schema:
        return " or ".join(_describe(s) for s in schema["anyOf"])
    t = schema.get("type", "any")
    if t == "array":
        return f"array of {_describe(schema.get('items', {}))}"
    return str(t)


def _arg(path: str) -> str:
    return f" argument {path!r}" if path else ""


def validate_value(schema: dict[str, Any], value: Any, *, tool: str, path: str) -> Any:
    """Validate ``value`` against the subset of JSON schema that :func:`schema_for` emits."""

    def fail(expected: str) -> ToolArgumentError:
        return ToolArgumentError(f"tool {tool!r}{_arg(path)}: expected {expected}, got {_show(value)}", tool=tool)

    if "anyOf" in schema:
        errors = []
        for sub in schema["anyOf"]:
            try:
                return validate_value(sub, value, tool=tool, path=path)
            except ToolArgumentError as exc:
                errors.append(exc)
        raise fail(_describe(schema))
    if "enum" in schema:
        for allowed in schema["enum"]:
            if type(allowed) is type(value) and allowed == value:
                return value
        raise fail(_describe(schema))
    t = schema.get("type")
    if t == "string":
        if not isinstance(value, str):
            raise fail("string")
        return value
    if t == "boolean":
        if not isinstance(value, bool):
            raise fail("boolean")
        return value
    if t == "integer":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise fail("integer")
        if isinstance(value, float):
            if not math.isfinite(value):
                raise fail("a finite integer")
            if not value.is_integer():
                raise fail("integer")
            value = int(value)
        _check_bounds(schema, value, "an integer", fail)
        return value
    if t == "number":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise fail("number")
        try:
            finite = math.isfinite(value)
        except OverflowError:  # an int beyond float range: a tool would get inf from float()
            finite = False
        if not finite:
            raise fail("a finite number")
        _check_bounds(schema, value, "a number", fail)
        return value
    if t == "null":
        if value is not None:
            raise fail("null")
        return None
    if t == "array":
        if not isinstance(value, (list, tuple)):
            raise fail(_describe(schema))
        items = schema.get("items", {})
        return [validate_value(items, v, tool=tool, path=f"{path}[{i}]") for i, v in enumerate(value)]
    if t == "object":
        if not isinstance(value, Mapping):
            raise fail("object")
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        out: dict[str, Any] = {}
        for key, v in value.items():
            sub_path = f"{path}.{key}" if path else str(key)
            if key in props:
                out[key] = validate_value(props[key], v, tool=tool, path=sub_path)
            elif isinstance(extra, dict):
                out[key] = validate_value(extra, v, tool=tool, path=sub_path)
            elif extra is False:
                known = ", ".join(props) or "none"
                raise ToolArgumentError(
                    f"tool {tool!r}: unknown argument {sub_path!r} (known: {known})",
                    tool=tool,
                )
            else:
                out[key] = v
        for req in schema.get("required", []):
            if req not in value:
                sub_path = f"{path}.{req}" if path else req
                raise ToolArgumentError(
                    f"tool {tool!r}: missing required argument {sub_path!r} ({_describe(props.get(req, {}))})",
                    tool=tool,
                )
        for key, sub in props.items():
            if key not in out and "default" in sub and path:
                out[key] = sub["default"]
        return out
    return value


_BOUND_TESTS: tuple[tuple[str, str, Callable[[Any, Any], bool]], ...] = (
    ("minimum", ">=", lambda v, b: v >= b),
    ("exclusiveMinimum", ">", lambda v, b: v > b),
    ("maximum", "<=", lambda v, b: v <= b),
    ("exclusiveMaximum", "<", lambda v, b: v < b),
)


def _check_bounds(schema: dict[str, Any], value: Any, what: str, fail: Callable[[str], ToolArgumentError]) -> None:
    for key, op, ok in _BOUND_TESTS:
        if key in schema and not ok(value, schema[key]):
            raise fail(f"{what} {op} {schema[key]} ({key})")


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
    t: Tool, call: ToolCall, kwargs: dict[str, Any], ctx: Any, deadline_s: float | None
) -> ToolResult:
    """Run ``t`` on its own registered thread; wait for the result, the deadline or a cancel."""
    import threading

    from edgevox.runtime.activities import start_activity
    from edgevox.runtime.context import CancelToken

    parent = getattr(ctx, "cancel_token", None)
    token = parent.child(f"tool:{t.name}") if parent is not None else CancelToken(f"tool:{t.name}")
    tool_ctx = ctx.child(cancel_token=token) if hasattr(ctx, "child") else ctx
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


def _run_coroutine(coro: Any, token: Any) -> Any:
    """Run ``coro`` on a fresh event loop in this thread; a cancelled ``token`` cancels it."""
    import asyncio

    async def main() -> Any:
        task = asyncio.ensure_future(coro)
        loop = asyncio.get_running_loop()
        remove = token.on_cancel(lambda _r: loop.call_soon_threadsafe(task.cancel)) if token is not None else None
        try:
            return await task
        except asyncio.CancelledError:
            raise Cancelled(getattr(token, "reason", "") or "cancelled") from None
        finally:
            if remove is not None:
                remove()

    return asyncio.run(main())
