"""Modules stay readable in one sitting (issue 12): a module over :data:`LIMIT` lines says why at
the top of its docstring ("Over 400 lines because ..."), or it is split by concept."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import edgevox

LIMIT = 410
"""About 400 lines; a few lines of slack so a one-line fix does not demand a reason."""
REASON = re.compile(r"\b(over|about|just over) \d{3} lines\b", re.IGNORECASE)
"""How a module docstring states its reason: "Over 400 lines because ...", "(About 480 lines ...)"."""
TOP_LINES = 12
"""The reason must be near the top of the docstring, where a reader sees it first."""


def _modules() -> list[Path]:
    return sorted(Path(edgevox.__file__).parent.rglob("*.py"))


def test_every_module_over_the_limit_says_why_at_the_top_of_its_docstring():
    unexplained = []
    for path in _modules():
        text = path.read_text(encoding="utf-8")
        if text.count("\n") <= LIMIT:
            continue
        doc = ast.get_docstring(ast.parse(text)) or ""
        top = "\n".join(doc.splitlines()[:TOP_LINES])
        if not REASON.search(top):
            unexplained.append(
                f"{path.relative_to(Path(edgevox.__file__).parent.parent)} ({text.count(chr(10))} lines)"
            )
    assert not unexplained, "split these by concept, or say why not at the top of the docstring: " + ", ".join(
        unexplained
    )


def test_the_reason_pattern_reads_the_phrasings_in_use():
    for phrase in ("Over 400 lines because", "(About 480 lines on purpose:", "(Just over 400 lines:"):
        assert REASON.search(phrase), phrase
    assert not REASON.search("A 400-line module")
