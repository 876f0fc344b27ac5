"""STT vocabulary biasing: which words should recognition prefer?

The configured vocabulary plus the names (``move_forward`` -> "move forward") and every
string ``enum`` value (nested objects, arrays and ``anyOf`` included) of the tools the
next turn may use. Which tools those are, the agent says through one of two typed seams:

* :class:`VocabularySource` - ``next_turn_tools()``: composites that route a turn to one of
  several agents (the orchestration :class:`~edgevox.orchestration.coordinator.Coordinator`)
  answer with the union of their members' tools;
* :class:`HasTools` - a ``tools`` attribute (``LLMAgent``; a list, a ``ToolBox`` or a mapping).

A tool is a :class:`~edgevox.agents.tools.Tool` (anything with ``name`` and ``parameters``,
:class:`ToolSchema`) or an OpenAI-style dict (``{"type": "function", "function": {...}}`` or
``{"name", "parameters"}``; ``input_schema`` is read as ``parameters``).

Rejected alternative: reading an ``active_agent`` attribute to follow the conversation to the
agent that answers next. No class defined it, so apps using orchestration gave STT no tool
vocabulary at all; and the next turn may be routed anywhere, so the union is the honest answer.

Pure functions; the STT thread calls :func:`vocabulary_for` per utterance (cheap).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol, TypeAlias, runtime_checkable


@runtime_checkable
class ToolSchema(Protocol):
    """A tool as STT biasing reads it: its name and its JSON-schema parameters."""

    name: str
    parameters: Mapping[str, Any]


ToolLike: TypeAlias = "ToolSchema | Mapping[str, Any]"
"""A :class:`ToolSchema` or an OpenAI-style tool dict."""


@runtime_checkable
class VocabularySource(Protocol):
    """An agent that says which tools its next turn may use (for STT biasing)."""

    def next_turn_tools(self) -> Iterable[ToolLike]: ...


@runtime_checkable
class HasTools(Protocol):
    """An agent with its tools as an attribute (a list, a ``ToolBox`` or a name -> tool mapping)."""

    tools: Iterable[ToolLike] | Mapping[str, ToolLike]


def tools_of(agent: object) -> list[ToolLike]:
    """The tools ``agent``'s next turn may use (see the module docstring); [] if it has none."""
    if isinstance(agent, VocabularySource):
        return list(agent.next_turn_tools())
    if isinstance(agent, HasTools):
        tools = agent.tools
        if tools is None:
            return []
        return list(tools.values() if isinstance(tools, Mapping) else tools)
    return []


def _tool_name_and_schema(tool: object) -> tuple[str, object]:
    if isinstance(tool, Mapping):
        spec = tool.get("function", tool)
        return str(spec.get("name", "")), spec.get("parameters") or spec.get("input_schema")
    if isinstance(tool, ToolSchema):
        return str(tool.name or ""), tool.parameters
    return "", None


def enum_values(schema: object) -> list[str]:
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


def tool_vocabulary(tools: Iterable[object]) -> list[str]:
    """Words from tool names and enum values."""
    words: list[str] = []
    for tool in tools:
        name, schema = _tool_name_and_schema(tool)
        if name:
            words.append(name.replace("_", " ").replace("-", " ").strip())
        words.extend(enum_values(schema))
    return words


def vocabulary_for(configured: Iterable[str], agent: object) -> tuple[str, ...]:
    """Configured words first, then the agent's tool words; de-duplicated, order kept."""
    seen: set[str] = set()
    out: list[str] = []
    for word in [*configured, *tool_vocabulary(tools_of(agent))]:
        key = word.strip().lower()
        if key and key not in seen:
            seen.add(key)
            out.append(word.strip())
    return tuple(out)
