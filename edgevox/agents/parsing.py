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

:func:`spoken_text` is the other half: the words of a model's raw output meant for a person,
with everything written for the chat template or for the machine taken out (the one seam every
reply an agent speaks goes through; see its docstring).

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


# -- what of a model's output is spoken -----------------------------------------------------

_TURN_HEADER = re.compile(
    r"^\s*(?:<\|im_start\|>[ \t]*(?:assistant|model)?|<start_of_turn>[ \t]*(?:model|assistant)?"
    r"|<\|start_header_id\|>\s*assistant\s*<\|end_header_id\|>|<\|assistant\|>|<s>|<bos>)[ \t]*\n?",
    re.IGNORECASE,
)
"""The template's header of the model's own turn, when a model writes it out (dropped)."""
_OPEN_HEADER = re.compile(r"\s*(?:<\|im_start\|>|<start_of_turn>|<\|start_header_id\|>)[ \t]*([A-Za-z]*)$")
_TURN_END = re.compile(
    r"<\|(?:im_end|eot_id|eom_id|endoftext|end_of_text|end|im_start|start_header_id|user|system)\|>"
    r"|</s>|<end_of_turn>|<start_of_turn>|<eos>|\[INST\]|\[/INST\]",
    re.IGNORECASE,
)
"""Where the model's turn ends (or the next one starts): nothing after it is for the user."""
_MACHINE_BLOCK = re.compile(
    r"<(tool_call|tool_response|tools|think|functioncall)>.*?(?:</\1>|$)"
    r"|<function=[^>]*>.*?(?:</function>|$)|```.*?(?:```|$)"
    r"|\[TOOL_CALLS\].*$|<\|python_tag\|>.*$",
    re.IGNORECASE | re.DOTALL,
)
"""Blocks written for the machine: tool calls and results, reasoning, code (to their end, or
to the end of the text when they are cut off)."""
_SPECIAL = re.compile(r"<\|[^|<>\s]{1,40}\|>")
_TAG_RE = re.compile(r"</?[A-Za-z][\w:-]*(?:\s[^<>]*)?/?>")
_PARTIAL = re.compile(r"<(?:\|[^>]*|[/!A-Za-z][^<>\s]*)?$")
"""A tag or special token still being written at the end of a streamed text."""


def model_turn(raw: str) -> str:
    """``raw`` as the model's own turn: without a header of that turn the model wrote out
    (``<|im_start|>assistant``), and cut at the first end-of-turn or next-turn token."""
    text = raw.replace("\r", "")
    opening = _OPEN_HEADER.match(text)
    if opening is not None and any(role.startswith(opening.group(1).lower()) for role in ("assistant", "model")):
        return ""  # "<|im_start|>assista": a header still being written
    while True:  # "<s><|im_start|>assistant\n": every header the model wrote for itself
        header = _TURN_HEADER.match(text)
        if header is None or not header.group(0):
            break
        text = text[header.end() :]
    end = _TURN_END.search(text)
    return text if end is None else text[: end.start()]


def spoken_text(raw: str, tools: Iterable[Tool] = (), *, final: bool = True) -> str:
    """The words of ``raw`` (a model's output) meant for a person; "" if there are none.

    The one seam every reply an LLM agent speaks goes through (a decoder's reply, the streamed
    reply, a handoff target's words): the turn ends at the first end-of-turn or next-turn token
    of any common template (``<|im_end|>``, ``<|eot_id|>``, ``</s>``, ``<end_of_turn>``,
    ``<|im_start|>`` ...; what a small model writes after one is an imagined next turn), a
    header of its own turn at the start (``<|im_start|>assistant``) is dropped, and so are tool
    call and reasoning blocks (``<tool_call>``, ``<think>``, ``[TOOL_CALLS]``, code fences),
    JSON objects and arrays, pythonic calls of ``tools``, other special tokens and tags.
    Words around them are kept: ``'{"name": "drive_to", ...} Sure!<|im_end|>'`` -> ``"Sure!"``.

    What is still being written at the end (``<|im_``, an unclosed ``{`` or ``[``) is held
    back, so while a text streams each call's result extends the last one's;
    ``final=False`` (streaming) also keeps trailing blanks."""
    text = model_turn(raw)
    partial = _PARTIAL.search(text)  # a token still being written, or cut off by max_tokens
    if partial is not None:
        text = text[: partial.start()]
    if not final:
        text = text.rstrip("`")  # perhaps a code fence being written
    text = _MACHINE_BLOCK.sub(" ", text)
    text = _SPECIAL.sub(" ", text)
    text = _drop_json(text)
    names = {t.name for t in tools}
    if names:
        text = _drop_named_calls(text, names)
        last = re.search(r"(?:\bfunctions\.)?\b([A-Za-z_]\w*)\s*$", text)
        if not final and last is not None and any(n.startswith(last.group(1)) for n in names):
            text = text[: last.start()]  # "drive_t": perhaps a call of drive_to, being written
    text = _TAG_RE.sub(" ", text)
    text = re.sub(r"[ \t]{2,}", " ", text)
    text = re.sub(r" +([.,;:!?])", r"\1", text)
    text = text.lstrip()
    return text.rstrip() if final else text


def _drop_json(text: str) -> str:
    """``text`` without JSON objects and arrays (and bracketed machine text); a bracket that
    never closes takes the rest with it (a call cut off by ``max_tokens``)."""
    out: list[str] = []
    i = 0
    decoder = json.JSONDecoder()
    while i < len(text):
        ch = text[i]
        if ch not in "{[":
            out.append(ch)
            i += 1
            continue
        try:
            _obj, end = decoder.raw_decode(text, i)
        except _PARSE_ERRORS:
            closing = _closing(text, i)
            if closing is None:
                break  # cut off: the rest is its body
            end = closing
            inner = text[i + 1 : end - 1]
            if not re.search(r'["{}:\[\]=(]', inner):
                out.append(text[i:end])  # "[laughs]", "{curly}": words, not data
                i = end
                continue
        out.append(" ")
        i = end
    return "".join(out)


def _closing(text: str, start: int) -> int | None:
    """The index just after the bracket that closes the one at ``start`` (None if it never does)."""
    depth = 0
    for j in range(start, len(text)):
        if text[j] in "{[(":
            depth += 1
        elif text[j] in "}])":
            depth -= 1
            if depth == 0:
                return j + 1
    return None


def _drop_named_calls(text: str, names: set[str]) -> str:
    """``text`` without pythonic calls of ``names`` (``drive_to(place="kitchen")``, ``functions.stop()``)."""
    out = text
    for match in reversed(list(re.finditer(r"(?:\bfunctions\.)?\b([A-Za-z_]\w*)\s*\(", text))):
        if match.group(1) not in names:
            continue
        end = _closing(text, match.end() - 1)
        out = out[: match.start()] + " " + (out[end:] if end is not None else "")
    return out
