"""A tool call and what came of it: :class:`ToolCall` (what the model asked for),
:class:`ToolResult` (the value, or the error and its kind) and :func:`value_in_words`, the
value as the model, the events and the speech see it, cut to :data:`MAX_RESULT_CHARS`.

Both classes are also importable from :mod:`edgevox.agents.tools` (and ``edgevox.agents``).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any


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
                    if not add(f"{safe_str(key)}: "):
                        return False
                if not walk(item, depth + 1):
                    return False
            return True
        return add(safe_str(v))

    walk(value, 0)
    text = "".join(parts)
    if len(text) <= limit:
        return text
    cut = text[:limit]
    end = max(cut.rfind(". "), cut.rfind("! "), cut.rfind("? "))
    cut = cut[: end + 1] if end > limit // 2 else cut.rsplit(" ", 1)[0]
    return f"{cut} ..."


def safe_str(value: Any) -> str:
    try:
        text = str(value)
    except Exception:  # noqa: BLE001 - a value whose __str__ fails is named by its type
        return f"a {type(value).__name__} value"
    return text if len(text) <= 4 * MAX_RESULT_CHARS else text[: 4 * MAX_RESULT_CHARS]
