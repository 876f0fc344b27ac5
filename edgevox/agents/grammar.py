"""GBNF grammars (llama.cpp) generated from tool schemas.

Output format of a constrained decode (also understood by ``parsing.py``)::

    {"name": "turn", "arguments": {"direction": "left", "degrees": 45}}
    {"reply": "Hello! I am a home robot."}

What the generator covers, because small models need it and a grammar that cannot
say it silently forces wrong output:

- nested objects and arrays (any depth; arrays bounded by ``maxItems``, default 8), ``anyOf`` (e.g. ``X | None``), ``null``;
- optional properties: each may be omitted, in any subset, never forced; required
  ones always come first, in schema order;
- enums (any JSON literal), numbers, integers, booleans, strings (bounded length,
  escapes); ``additionalProperties`` maps;
- ``fixed``: argument values already known (from the schema resolver) become
  literals, so the model only fills what is missing;
- ``string_choices``: a string argument restricted to given phrases (e.g. spans of
  the user's words), so a tiny model copies instead of inventing.

Whitespace is allowed in at most one space per position: unbounded whitespace lets a
small model loop on spaces until ``max_tokens``. Digits are bounded the same way.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from edgevox.agents.tools import Tool

PRIMITIVES = {
    "ws": "[ ]?",
    "boolean": '"true" | "false"',
    "null": '"null"',
    "digit": "[0-9]",
    "integer": '"-"? [0-9] ' + " ".join(["[0-9]?"] * 5),
    "number": '"-"? [0-9] ' + " ".join(["[0-9]?"] * 5) + ' ("." [0-9] [0-9]? [0-9]?)?',
    "char": '[^"\\\\\\x00-\\x1f] | "\\\\" ["\\\\/bfnrt]',
}
"""Building blocks (``string`` is rendered with a bounded length, see :meth:`GrammarBuilder.render`)."""


def _literal(value: Any) -> str:
    """A GBNF string literal matching ``json.dumps(value)`` exactly."""
    text = json.dumps(value, ensure_ascii=False)
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


class GrammarBuilder:
    """Accumulates named rules; :meth:`render` gives the grammar text."""

    def __init__(self, max_string_chars: int = 64, max_array_items: int = 8) -> None:
        self.rules: dict[str, str] = {}
        self.max_string_chars = max_string_chars
        self.max_array_items = max_array_items
        self._used: set[str] = set()

    def _prim(self, name: str) -> str:
        self._used.add(name)
        if name == "string":
            self._used.add("char")
        return name

    def add(self, hint: str, body: str) -> str:
        base = re.sub(r"[^a-zA-Z0-9-]", "-", hint).strip("-").lower() or "r"
        name = base
        i = 1
        while name in self.rules and self.rules[name] != body:
            i += 1
            name = f"{base}-{i}"
        self.rules[name] = body
        return name

    def value(self, schema: Mapping[str, Any], hint: str) -> str:
        """Rule name for a value matching ``schema``."""
        if "const" in schema:
            return self.add(hint + "-const", _literal(schema["const"]))
        if "enum" in schema:
            return self.add(hint + "-enum", " | ".join(_literal(v) for v in schema["enum"]))
        if "anyOf" in schema:
            parts = [self.value(s, f"{hint}-{i}") for i, s in enumerate(schema["anyOf"])]
            return self.add(hint + "-any", " | ".join(parts))
        if "x-choices" in schema:
            return self.add(hint + "-choice", " | ".join(_literal(v) for v in schema["x-choices"]))
        t = schema.get("type")
        if isinstance(t, list):
            return self.value({"anyOf": [{**schema, "type": x} for x in t]}, hint)
        if t in ("boolean", "null", "integer", "number"):
            return self._prim(t)
        if t == "string":
            return self._prim("string")
        if t == "array":
            item = self.value(schema.get("items", {"type": "string"}), hint + "-item")
            ws = self._prim("ws")
            # Bounded: a small model otherwise repeats items until max_tokens.
            n = int(schema.get("maxItems", self.max_array_items))
            more = f' ( "," {ws} {item}' * (n - 1) + " )?" * (n - 1)
            return self.add(hint + "-array", f'"[" {ws} ( {item}{more} )? {ws} "]"')
        if t == "object" or "properties" in schema:
            return self.object(schema, hint)
        raise ValueError(f"grammar: unsupported schema at {hint!r}: {dict(schema)!r}")

    def object(self, schema: Mapping[str, Any], hint: str) -> str:
        props: Mapping[str, Any] = schema.get("properties", {})
        ws = self._prim("ws")
        if not props:
            extra = schema.get("additionalProperties")
            if isinstance(extra, Mapping):
                v = self.value(extra, hint + "-value")
                pair = self.add(hint + "-kv", f'{self._prim("string")} {ws} ":" {ws} {v}')
                return self.add(hint, f'"{{" {ws} ( {pair} ( "," {ws} {pair} )* )? {ws} "}}"')
            return self.add(hint, f'"{{" {ws} "}}"')
        required = [k for k in props if k in set(schema.get("required", []))]
        optional = [k for k in props if k not in required]

        def kv(key: str) -> str:
            v = self.value(props[key], f"{hint}-{key}")
            return self.add(f"{hint}-{key}-kv", f'{_literal(key)} {ws} ":" {ws} {v}')

        req_rules = [kv(k) for k in required]
        opt_rules = [kv(k) for k in optional]
        if req_rules:
            body = f' "," {ws} '.join(req_rules)
            body += "".join(f' ( "," {ws} {o} )?' for o in opt_rules)
            inner = body
        elif opt_rules:
            # Any subset in order: "first chosen" alternatives, each followed by optional later ones.
            alts = []
            for i, o in enumerate(opt_rules):
                tail = "".join(f' ( "," {ws} {later} )?' for later in opt_rules[i + 1 :])
                alts.append(f"{o}{tail}")
            inner = "( " + " | ".join(alts) + " )?"
        else:
            inner = ""
        return self.add(hint, f'"{{" {ws} {inner} {ws} "}}"')

    def render(self, root: str) -> str:
        lines = [f"root ::= {root}"]
        for name, body in self.rules.items():
            lines.append(f"{name} ::= {body}")
        if "string" in self._used:
            self._used |= {"char"}
            n = self.max_string_chars
            # char{0,n}, not n x "char?": llama.cpp expands the bound as nested options (one parse
            # stack per step), while n independent "char?" make a stack per way of skipping them,
            # which took minutes per token at n = 64 (issue 13, the orchestration tools' strings).
            lines.append(f'string ::= "\\"" char{{0,{n}}} "\\""')
        for name in ("ws", "boolean", "null", "integer", "number", "char"):
            if name in self._used:
                lines.append(f"{name} ::= {PRIMITIVES[name]}")
        return "\n".join(lines) + "\n"


def arguments_schema(
    t: Tool, fixed: Mapping[str, Any] | None = None, string_choices: Mapping[str, Sequence[str]] | None = None
) -> dict[str, Any]:
    """The tool's argument schema with ``fixed`` values as constants and string choices applied."""
    schema = json.loads(json.dumps(t.parameters))
    props = schema.get("properties", {})
    for key, value in (fixed or {}).items():
        if key in props:
            props[key] = {"const": value}
            if key not in schema.setdefault("required", []):
                schema["required"].append(key)
    for key, choices in (string_choices or {}).items():
        if key in props and props[key].get("type") == "string" and "enum" not in props[key] and choices:
            props[key] = {**props[key], "x-choices": list(dict.fromkeys(choices))}
    # Keep schema order for required keys (fixed ones are appended only if optional before).
    schema["required"] = [k for k in props if k in set(schema.get("required", []))]
    return schema


def tool_call_grammar(
    tools: Iterable[Tool],
    *,
    allow_reply: bool = True,
    fixed: Mapping[str, Mapping[str, Any]] | None = None,
    string_choices: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
    max_reply_chars: int = 160,
) -> str:
    """One grammar: a call of any of ``tools`` (``{"name", "arguments"}``) or ``{"reply": ...}``."""
    g = GrammarBuilder()
    ws = g._prim("ws")
    alts = []
    for t in tools:
        schema = arguments_schema(t, (fixed or {}).get(t.name), (string_choices or {}).get(t.name))
        args = g.value(schema, f"{t.name}-args")
        alts.append(
            g.add(
                f"call-{t.name}",
                f'"{{" {ws} "\\"name\\":" {ws} {_literal(t.name)} "," {ws} "\\"arguments\\":" {ws} {args} {ws} "}}"',
            )
        )
    if allow_reply:
        g.max_string_chars = max_reply_chars
        alts.append(g.add("reply", f'"{{" {ws} "\\"reply\\":" {ws} {g._prim("string")} {ws} "}}"'))
    if not alts:
        raise ValueError("tool_call_grammar: no tools and replies not allowed: nothing can be generated")
    return g.render(" | ".join(alts))


def choice_grammar(options: Sequence[str]) -> str:
    """Exactly one of ``options`` (tool names, route names, ``none``...)."""
    if not options:
        raise ValueError("choice_grammar: no options")
    return "root ::= " + " | ".join(_plain(o) for o in options) + "\n"


def _plain(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def arguments_grammar(
    t: Tool, *, fixed: Mapping[str, Any] | None = None, string_choices: Mapping[str, Sequence[str]] | None = None
) -> str:
    """Just the arguments object of ``t`` (the second stage of a two-stage decode)."""
    g = GrammarBuilder()
    root = g.value(arguments_schema(t, fixed, string_choices), f"{t.name}-args")
    return g.render(root)


def schema_grammar(schema: Mapping[str, Any], max_string_chars: int = 64) -> str:
    """A grammar for any value matching ``schema`` (the subset ``tool_schema.schema_for`` emits)."""
    g = GrammarBuilder(max_string_chars)
    return g.render(g.value(schema, "value"))
