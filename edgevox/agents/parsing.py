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


def parse_tool_calls(text: str, tools: Iterable[Tool] | None = None) -> list[ToolCall]:
    """Every tool call found in ``text`` (empty list: the model answered in words)."""
    known = {t.name: t for t in tools} if tools is not None else None
    text = text.strip()
    if not text:
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


def parse_reply(text: str) -> str | None:
    """The text of a ``{"reply": "..."}`` object, or None if ``text`` is not one."""
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
            except json.JSONDecodeError:
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
        try:
            args = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError:
            return None
    if not isinstance(args, dict):
        return None
    if known is not None and name not in known:
        return ToolCall(name, args)  # kept: the agent reports "unknown tool" to the model
    return ToolCall(name, args)


def _from_python(text: str, known: Mapping[str, Tool] | None) -> list[ToolCall]:
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        m = _PY_CALL_RE.search(text)
        if not m:
            return []
        try:
            tree = ast.parse(m.group(0).strip(), mode="eval")
        except SyntaxError:
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
        except ValueError:
            continue
        if positional:
            if known is None:
                continue
            order = list(known[name].parameters.get("properties", {}))
            args.update({k: v for k, v in zip(order, positional, strict=False) if k not in args})
        calls.append(ToolCall(name, args))
    return calls
