"""The JSON schema of a tool's arguments, read from the function's type hints and its
docstring (Google, NumPy or reST style, read by ``docstring_parser``) (what :func:`edgevox.agents.tools.build_tool` uses). Supported annotations:

- ``str``, ``int``, ``float``, ``bool`` -> ``string``, ``integer``, ``number``, ``boolean``
- ``Literal["a", "b"]`` -> ``enum`` (with the type of the values)
- ``X | None`` / ``Optional[X]`` -> ``anyOf [X, null]``
- ``list[X]`` / ``tuple[X, ...]`` -> ``array`` of X; ``dict[str, X]`` -> object with ``additionalProperties``
- dataclasses and ``TypedDict`` -> nested ``object`` (validated values become the dataclass)
- ``Annotated[X, "description"]`` -> X with a description
- ``Annotated[float, Field(ge=-5, le=5)]`` (pydantic ``Field`` or ``annotated_types``
  ``Ge/Gt/Le/Lt/Interval``) -> ``minimum``/``maximum`` (``exclusiveMinimum``/``exclusiveMaximum``);
  a docstring range does the same: "-5 to 5", "between 0 and 100", "(0-100)"

:func:`schema_for` also returns a converter for validated values (a dataclass is built from
its validated dict). :mod:`edgevox.agents.tool_validation` checks values against the subset
of JSON schema emitted here.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, Union, get_args, get_origin

import docstring_parser

from edgevox.language.bounds import docstring_bounds


def parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a docstring into (description, {arg: description}) with ``docstring_parser``.

    Google (``Args:``), NumPy (``Parameters`` / ``----------``) and reST (``:param x:``)
    styles are recognised; the description is the text before the sections, and every
    description has its line breaks and indentation folded into single spaces. A docstring
    no style can read is all description."""
    try:
        parsed = docstring_parser.parse(doc)
    except docstring_parser.ParseError:
        return _fold(doc), {}
    summary = " ".join(_fold(p) for p in (parsed.short_description, parsed.long_description) if p)
    return summary, {p.arg_name.lstrip("*"): _fold(p.description or "") for p in parsed.params}


def _fold(text: str) -> str:
    return " ".join(text.split())


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


def with_doc(schema: dict[str, Any], doc: str) -> dict[str, Any]:
    """A parameter's docstring line: its description (unless the annotation gave one) and its range
    (unless the annotation gave bounds)."""
    if "description" not in schema:
        schema = {**schema, "description": doc}
    has_bounds = any(k in s for s in (schema, *schema.get("anyOf", ())) for k in _BOUND_KEYS.values())
    return schema if has_bounds else _with_bounds(schema, docstring_bounds(doc), "", strict=False)


def strip_annotated(hint: Any) -> tuple[Any, str | None]:
    if get_origin(hint) is typing.Annotated:
        base, *meta = get_args(hint)
        desc = next((m for m in meta if isinstance(m, str)), None)
        # pydantic's Field(description=...), duck-typed: its text is the parameter's, as a string's is
        described = (d for m in meta if isinstance(d := getattr(m, "description", None), str) and d.strip())
        return base, desc if desc is not None else next(described, None)
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
    hint, desc = strip_annotated(hint)
    schema, conv = _schema_for(hint, where)
    schema = _with_bounds(schema, bounds, where, strict=True)
    if desc:
        schema = {**schema, "description": desc}
        if not bounds:  # Annotated[float, "metres, at most 2 either way"]: the same as a docstring line
            schema = _with_bounds(schema, docstring_bounds(desc), where, strict=False)
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
        member_conv: Callable[[Any], Any] | None = None
        if convs:
            # Only a nested object member needs converting; dicts are unambiguous there.
            obj_conv = next(iter(convs.values()))

            def convert_member(v: Any, _c: Callable[[Any], Any] = obj_conv) -> Any:
                return _c(v) if isinstance(v, dict) else v

            member_conv = convert_member
        return {"anyOf": schemas}, member_conv
    if origin in (list, tuple, typing.List, typing.Tuple) or hint in (list, tuple):  # noqa: UP006
        args = get_args(hint)
        if origin in (tuple, typing.Tuple) and args and (len(args) != 2 or args[1] is not Ellipsis):  # noqa: UP006
            raise TypeError(f"{where}: fixed-length tuples are not supported; use tuple[X, ...] or list[X]")
        item_hint = args[0] if args else Any
        if item_hint is Any:
            raise TypeError(f"{where}: list needs an item type, e.g. list[str]")
        item_schema, item_conv = schema_for(item_hint, where=where)
        items_conv: Callable[[Any], Any] | None = None
        if item_conv is not None:

            def convert_items(v: Any, _c: Callable[[Any], Any] = item_conv) -> Any:
                return [_c(x) for x in v]

            items_conv = convert_items
        return {"type": "array", "items": item_schema}, items_conv
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
                schema = {**schema, "default": jsonable_default(f.default)}
            elif f.default_factory is not dataclasses.MISSING:
                pass
            else:
                required.append(f.name)
            if f.name in field_docs:
                schema.setdefault("description", field_docs[f.name])
            properties[f.name] = schema
            if conv:
                convs[f.name] = conv
    else:
        req: frozenset[str] = getattr(tp, "__required_keys__", frozenset())
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


def jsonable_default(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, tuple):
        return list(value)
    return value
