"""Tool-calling evaluation: does the agent make the right *first* call?

A case is a JSON line ``{"text": ..., "expect": {"name", "arguments"} | null | "clarify"}``
(``null``: answer in words, no tool; ``"clarify"``: ask a question, no tool). A call
matches when the tool name is the same and the arguments are equal after filling the
tool's declared defaults: numbers numerically, strings case-insensitively (and
trimmed), booleans exactly.

Besides accuracy, two safety counts (:func:`false_actions`, :func:`clarifications`):

- a **false action** is a tool call made that the case did not expect: any call where
  words or a question were expected, or a call that does not match the expected one
  (another tool, or the right tool with other arguments: ``move(2)`` for
  ``move(-2)`` drives the wrong way). A clarifying question is never a false action.
- a **clarification** is a run that asked a question instead of acting
  (``result.data["clarify"]``); it scores as correct only where ``"clarify"`` was expected.

:func:`evaluate_agent` runs each case through ``agent.run`` on a fresh context and
times it; :func:`evaluate_baseline` runs the same model with no grammar and no fast
path (a plain tool prompt, free text parsed by ``parsing.py``): what a naive
integration gets. Both return :class:`CaseOutcome` lists; the CLI prints them.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edgevox.agents.tools import Tool, ToolCall, fill_defaults
from edgevox.errors import ConfigError

CLARIFY = "clarify"
"""The ``expect`` value of a case that should be answered with a question."""


@dataclass(frozen=True)
class Case:
    text: str
    expect: dict[str, Any] | str | None


@dataclass
class CaseOutcome:
    case: Case
    got: ToolCall | None
    ok: bool
    latency_s: float
    decided_by: str = ""
    error: str = ""
    clarify: str = ""
    """The question asked instead of acting, if any."""

    @property
    def false_action(self) -> bool:
        """A call was made that the case did not expect (see the module docstring)."""
        return self.got is not None and not self.ok


def load_cases(path: str | Path) -> list[Case]:
    """Read a JSONL case file; a malformed line is an error naming file and line."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"{p}: case file not found")
    cases = []
    for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            text, expect = obj["text"], obj["expect"]
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise ConfigError(f'{p}:{n}: expected {{"text": ..., "expect": ...}}: {exc}') from None
        if expect is not None and expect != CLARIFY and (not isinstance(expect, dict) or "name" not in expect):
            raise ConfigError(f'{p}:{n}: expect must be null, "clarify" or {{"name", "arguments"}}, got {expect!r}')
        cases.append(Case(str(text), expect))
    return cases


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(float(a), float(b), rel_tol=1e-6, abs_tol=1e-9)
    if isinstance(a, str) and isinstance(b, str):
        return a.strip().casefold() == b.strip().casefold()
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def call_matches(expect: dict[str, Any] | str | None, got: ToolCall | None, tools: Iterable[Tool]) -> bool:
    """The comparison rule of the evaluation (see the module docstring)."""
    if expect == CLARIFY:
        return False  # a question was expected; only the outcome knows whether one was asked
    if expect is None or got is None:
        return expect is None and got is None
    assert isinstance(expect, dict)
    if expect["name"] != got.name:
        return False
    t = next((t for t in tools if t.name == got.name), None)
    want = dict(expect.get("arguments") or {})
    have = dict(got.arguments)
    if t is not None:
        want, have = fill_defaults(t, want), fill_defaults(t, have)
    return _same(want, have)


def evaluate_agent(agent: Any, cases: Sequence[Case], make_ctx: Callable[[], Any] | None = None) -> list[CaseOutcome]:
    """Run every case through ``agent.run`` (fresh context each) and compare the first call."""
    from edgevox.runtime.context import AgentContext

    outcomes = []
    for i, case in enumerate(cases):
        ctx = make_ctx() if make_ctx else AgentContext(session_id=f"eval-{i}")
        start = time.perf_counter()
        result = agent.run(case.text, ctx)
        latency = time.perf_counter() - start
        for goal in result.skills:  # the robot need not finish driving to score the call
            goal.cancel("evaluation case done")
        got = result.first_call
        question = str(result.data.get("clarify") or "")
        if case.expect == CLARIFY:
            ok = got is None and bool(question)
        else:
            ok = not question and call_matches(case.expect, got, agent.tools)
        outcomes.append(
            CaseOutcome(case, got, ok, latency, str(result.data.get("decided_by", "")), result.error, question)
        )
    return outcomes


def evaluate_baseline(
    llm: Any, tools: Sequence[Tool], cases: Sequence[Case], *, instructions: str = "", max_tokens: int = 96
) -> list[CaseOutcome]:
    """Same model, plain prompt with the tool specs, no grammar, free text parsed."""
    from edgevox.agents.decoders import DecisionRequest, FreeTextDecoder

    decoder = FreeTextDecoder(max_tokens=max_tokens)
    outcomes = []
    for case in cases:
        messages = [{"role": "system", "content": instructions}, {"role": "user", "content": case.text}]

        def generate(msgs: list[dict[str, Any]], *, grammar: str | None = None, max_tokens: int = max_tokens) -> str:
            return "".join(llm.stream(msgs, max_tokens=max_tokens, grammar=grammar))

        start = time.perf_counter()
        decision = decoder.decide(DecisionRequest(case.text, messages, tools, generate, instructions=instructions))
        latency = time.perf_counter() - start
        outcomes.append(
            CaseOutcome(case, decision.call, call_matches(case.expect, decision.call, tools), latency, "llm")
        )
    return outcomes


def false_actions(outcomes: Sequence[CaseOutcome]) -> int:
    """Calls made that the cases did not expect (see the module docstring)."""
    return sum(o.false_action for o in outcomes)


def clarifications(outcomes: Sequence[CaseOutcome]) -> int:
    """Runs that asked a question instead of acting."""
    return sum(bool(o.clarify) for o in outcomes)


def accuracy(outcomes: Sequence[CaseOutcome]) -> float:
    return sum(o.ok for o in outcomes) / len(outcomes) if outcomes else 0.0


def mean_latency_s(outcomes: Sequence[CaseOutcome]) -> float:
    return sum(o.latency_s for o in outcomes) / len(outcomes) if outcomes else 0.0


def describe_call(call: ToolCall | dict[str, Any] | str | None) -> str:
    if call is None:
        return "(words)"
    if isinstance(call, str):
        return f"({call})"
    if isinstance(call, dict):
        name, args = call["name"], call.get("arguments") or {}
    else:
        name, args = call.name, call.arguments
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in args.items())})"
