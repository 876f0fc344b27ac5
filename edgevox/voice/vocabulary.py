"""STT vocabulary biasing: which words should recognition prefer?

The configured vocabulary plus, read generically from the active agent, its
tool names (``move_forward`` -> "move forward") and every string ``enum`` value
in the tools' JSON schemas (nested objects, arrays and ``anyOf`` included).
Tools may be :class:`~edgevox.agents.tools.Tool` objects (``.name`` /
``.parameters``), OpenAI-style dicts (``{"type": "function", "function": {...}}``
or ``{"name", "parameters"}``), or anything with a ``spec()`` giving such a dict;
``agent.tools`` may be a list, a ``ToolBox`` (iterable) or a mapping.

Pure functions; the STT thread calls :func:`vocabulary_for` per utterance (cheap).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def _tool_name_and_schema(tool: Any) -> tuple[str, Any]:
    if isinstance(tool, Mapping):
        spec = tool.get("function", tool)
        return str(spec.get("name", "")), spec.get("parameters") or spec.get("input_schema")
    name = getattr(tool, "name", "")
    schema = getattr(tool, "parameters", None) or getattr(tool, "input_schema", None)
    if schema is None and callable(getattr(tool, "spec", None)):
        spec = tool.spec()
        if isinstance(spec, Mapping):
            return _tool_name_and_schema(spec)
    return str(name or ""), schema


def enum_values(schema: Any) -> list[str]:
    """Every string enum (and const) value anywhere in a JSON schema."""
    out: list[str] = []
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            for value in node.get("enum", ()) or ():
                if isinstance(value, str):
                    out.append(value)
            if isinstance(node.get("const"), str):
                out.append(node["const"])
            stack.extend(v for k, v in node.items() if k not in ("enum", "const", "default", "examples"))
        elif isinstance(node, (list, tuple)):
            stack.extend(node)
    return out


def tool_vocabulary(tools: Any) -> list[str]:
    """Words from tool names and enum values."""
    if tools is None:
        return []
    if isinstance(tools, Mapping):
        tools = tools.values()
    words: list[str] = []
    for tool in tools if isinstance(tools, Iterable) else ():
        name, schema = _tool_name_and_schema(tool)
        if name:
            words.append(name.replace("_", " ").replace("-", " ").strip())
        words.extend(enum_values(schema))
    return words


def vocabulary_for(configured: Iterable[str], agent: Any) -> tuple[str, ...]:
    """Configured words first, then the agent's tool words; de-duplicated, order kept."""
    seen: set[str] = set()
    out: list[str] = []
    candidates = list(configured) + tool_vocabulary(getattr(agent, "tools", None))
    active = getattr(agent, "active_agent", None)
    if active is not None and active is not agent:
        candidates += tool_vocabulary(getattr(active, "tools", None))
    for word in candidates:
        key = word.strip().lower()
        if key and key not in seen:
            seen.add(key)
            out.append(word.strip())
    return tuple(out)
