"""A tool's arguments checked against its JSON schema (the subset
:func:`edgevox.agents.tool_schema.schema_for` emits).

Validation is strict on purpose (small models make small mistakes, and a robot must
not guess): ``True`` is not an integer or a number, unknown keys are rejected, enum
values are checked, ``NaN`` and infinities are never a number, bounds are enforced,
and each error names the tool, the argument (dotted path for nested values), what
was expected and what came::

    tool 'move' argument 'distance_m': expected number, got 'far'
    tool 'move' argument 'distance_m': expected a finite number, got nan
    tool 'move' argument 'distance_m': expected a number <= 5 (maximum), got 7

"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from edgevox.errors import ToolArgumentError


def show_value(value: Any) -> str:
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
        return "one of " + ", ".join(show_value(v) for v in schema["enum"])
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
        return ToolArgumentError(f"tool {tool!r}{_arg(path)}: expected {expected}, got {show_value(value)}", tool=tool)

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
