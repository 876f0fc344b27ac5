"""Tool calls parsed from free text, in the formats models commonly emit.

Used for models run without a grammar (other engines, the unconstrained baseline)
and for the grammar's own output. Recognised, in this order:

1. Hermes / Qwen: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` (several allowed)
2. Llama 3.1 ``<|python_tag|>`` prefix, then the JSON forms below
3. JSON objects anywhere in the text: ``{"name", "arguments"}`` (ours, OpenAI-style),
   ``{"name", "parameters"}`` (Llama 3), ``{"function": {"name", "arguments"}}``,
   ``{"tool": ..., "args": ...}``; a JSON list of these; ``arguments`` given as a JSON
   string is decoded
4. Pythonic: ``move(distance_m=2)`` or ``[move(distance_m=2), stop()]`` (only names of
   known tools when ``tools`` is given; positional arguments mapped in schema order)

``{"reply": "..."}`` (our grammar's "answer in words") parses as no call; use
:func:`parse_reply` to get its text.

Whatever a model emits, parsing never raises: text nested deeper than
:data:`MAX_NESTING` brackets is not a call (it would exhaust Python's recursion limit in
``json``/``ast``), and values Python cannot hold (``{[]: 1}``) make that call unparsed.
:func:`looks_like_call` tells an unparsed call attempt from words, so a broken call is
never spoken as the reply.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from edgevox.agents.tools import Tool, ToolCall

_TOOL_CALL_RE = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)
_PY_CALL_RE = re.compile(r"\[?\s*([A-Za-z_][A-Za-z0-9_]*)\s*\((.*)\)\s*\]?", re.S)
_MACHINE_TEXT = re.compile(
    r'^\s*[\[{<`]|"(?:name|arguments|tool|function)"\s*:|</?tool_call>|<\|'
    r"|\b\w+\(\s*\w+\s*=|\bfunctions\.\w+\(|<function=|\[TOOL_CALLS\]|^\s*name:\s*\w+\s*$",
    re.IGNORECASE | re.MULTILINE,
)
_NAME_CALL_RE = re.compile(r"\[?\s*([A-Za-z_][A-Za-z0-9_]*)\s*\(")

MAX_NESTING = 32
"""Deepest bracket nesting a tool call may have; deeper text is not parsed as a call."""

_PARSE_ERRORS = (ValueError, TypeError, SyntaxError, RecursionError, MemoryError, OverflowError)
"""What ``json``/``ast`` raise on text a model can emit (``literal_eval('{[]: 1}')`` is a TypeError)."""


def parse_tool_calls(text: str, tools: Iterable[Tool] | None = None) -> list[ToolCall]:
    """Every tool call found in ``text`` (empty list: the model answered in words)."""
    known = {t.name: t for t in tools} if tools is not None else None
    text = text.strip()
    if not text or nesting_depth(text) > MAX_NESTING:
        return []
    tagged = _TOOL_CALL_RE.findall(text)
    if tagged:
        calls: list[ToolCall] = []
        for body in tagged:
            calls.extend(_from_json_text(body, known))
            if not calls:
                calls.extend(_from_python(body, known))
        return calls
    text = text.replace("<|python_tag|>", "").strip()
    calls = _from_json_text(text, known)
    if calls:
        return calls
    return _from_python(text, known)


def looks_like_call(text: str, tools: Iterable[Tool] = ()) -> bool:
    """True when ``text`` holds a tool call (parsed or not) or markup rather than words: it
    opens with a JSON bracket, a tag or a code fence, or shows a call in any format small
    models emit (``"name":``, ``move(distance_m=...``, ``functions.move(``, ``<function=``,
    ``[TOOL_CALLS]``, a YAML ``name:`` line), or calls a known tool by name (``stop()``).
    Used to keep a call out of what is spoken."""
    return bool(_MACHINE_TEXT.search(text)) or calls_tool_by_name(text, tools)


def calls_tool_by_name(text: str, tools: Iterable[Tool]) -> bool:
    """``text`` opens with a call of one of ``tools`` by name (``move(``, ``[stop(``)."""
    match = _NAME_CALL_RE.match(text.strip())
    return bool(match and match.group(1) in {t.name for t in tools})


def nesting_depth(text: str) -> int:
    """Deepest nesting of ``([{`` brackets in ``text`` (outside JSON strings); linear time."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in ")]}":
            depth = max(0, depth - 1)
    return deepest


def parse_reply(text: str) -> str | None:
    """The text of a ``{"reply": "..."}`` object, or None if ``text`` is not one."""
    if nesting_depth(text) > MAX_NESTING:
        return None
    for obj in _json_objects(text.strip()):
        if isinstance(obj, dict) and isinstance(obj.get("reply"), str):
            return obj["reply"]
    return None


def _json_objects(text: str) -> list[Any]:
    decoder = json.JSONDecoder()
    found = []
    i = 0
    while i < len(text):
        if text[i] in "{[":
            try:
                obj, end = decoder.raw_decode(text, i)
            except _PARSE_ERRORS:
                i += 1
                continue
            found.append(obj)
            i = end
        else:
            i += 1
    return found


def _from_json_text(text: str, known: Mapping[str, Tool] | None) -> list[ToolCall]:
    calls: list[ToolCall] = []
    for obj in _json_objects(text):
        items = obj if isinstance(obj, list) else [obj]
        for item in items:
            call = _from_obj(item, known)
            if call is not None:
                calls.append(call)
    return calls


def _from_obj(obj: Any, known: Mapping[str, Tool] | None) -> ToolCall | None:
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("function"), dict):
        obj = obj["function"]
    name = obj.get("name", obj.get("tool", obj.get("tool_name")))
    if not isinstance(name, str) or not name:
        return None
    args: Any = next((obj[k] for k in ("arguments", "parameters", "args", "input") if k in obj), {})
    if isinstance(args, str):
        if nesting_depth(args) > MAX_NESTING:
            return None
        try:
            args = json.loads(args) if args.strip() else {}
        except _PARSE_ERRORS:
            return None
    if not isinstance(args, dict):
        return None
    if known is not None and name not in known:
        return ToolCall(name, args)  # kept: the agent reports "unknown tool" to the model
    return ToolCall(name, args)


def _from_python(text: str, known: Mapping[str, Tool] | None) -> list[ToolCall]:
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except _PARSE_ERRORS:
        m = _PY_CALL_RE.search(text)
        if not m:
            return []
        try:
            tree = ast.parse(m.group(0).strip(), mode="eval")
        except _PARSE_ERRORS:
            return []
    nodes = tree.body.elts if isinstance(tree.body, (ast.List, ast.Tuple)) else [tree.body]
    calls = []
    for node in nodes:
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
            continue
        name = node.func.id
        if known is not None and name not in known:
            continue
        try:
            args = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg}
            positional = [ast.literal_eval(a) for a in node.args]
        except _PARSE_ERRORS:
            continue
        if positional:
            if known is None:
                continue
            order = list(known[name].parameters.get("properties", {}))
            args.update({k: v for k, v in zip(order, positional, strict=False) if k not in args})
        calls.append(ToolCall(name, args))
    return calls
