"""Tool-calling evaluation: does the agent do what was asked, across the turns a user takes?

A case is a JSON line::

    {"text": ..., "expect": CALL | [CALL, ...] | null | "ask",
     "answer": "five metres", "after": CALL | [CALL, ...]}

with ``CALL = {"name": ..., "arguments": {...}}``:

- **act** (``expect`` a call, or a list of calls run in that order: a compound request):
  done right when the agent makes exactly those calls, first time, or after *one* question
  answered by the user (``answer``; when the case gives none, the user says "yes" to a
  proposal of exactly what they asked for and "no" to anything else);
- **must not act** (``null``): no call at all (a question is allowed, and counted);
- **must ask** (``"ask"``, also spelled ``"clarify"``): a question and no call; when the
  case gives an ``answer``, that answer must complete the request as ``after``.

A call matches when the tool name is the same and the arguments are equal after filling
the tool's declared defaults: numbers numerically, strings case-insensitively (and trimmed),
booleans exactly.

Counts besides accuracy: a **false action** is any call made that the case did not expect
(a wrong tool, a wrong sign or value, a call where none was wanted; a question never is);
**wrong arguments** are false actions of the right tool; a **missed action** is an act case
that ended with no call; **clarifications** are runs that asked.

The running app checks stop phrases before any agent sees the words (``voice/stop_phrases``,
the default phrases): the evaluation does the same (``stop_phrases``), so "stop recording"
is a safety stop here as it is on the robot. A stop is right for a must-not-act case and for
an act case whose tool is itself a stop (its verb is "stop", "halt" or "freeze").

:func:`evaluate_agent` runs each case through ``agent.run`` on a fresh session;
:func:`evaluate_baseline` runs the same model with no grammar and no fast path (a plain tool
prompt, free text parsed by ``parsing.py``): what a naive integration gets.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from edgevox.agents.tools import Tool, ToolCall, fill_defaults
from edgevox.errors import ConfigError

CLARIFY = "clarify"
"""The ``expect`` value of a case that should be answered with a question (also ``"ask"``)."""
ASK_SPELLINGS = (CLARIFY, "ask")
YES = "yes"
NO = "no"
"""What the simulated user answers a question about a case that gives no ``answer``: yes to a
proposal of what the case expects, no to anything else."""
STOP_VERBS = frozenset(("stop", "halt", "freeze"))


class StopCheck(Protocol):
    """The app's stop-phrase check (``voice.stop_phrases.StopPhraseMatcher``): the phrase, or None."""

    def match(self, text: str) -> str | None: ...


@dataclass(frozen=True)
class Case:
    text: str
    expect: dict[str, Any] | list[dict[str, Any]] | str | None
    answer: str | None = None
    """What the user answers if the robot asks (a case about a missing value says which)."""
    after: dict[str, Any] | list[dict[str, Any]] | None = None
    """The call(s) the answer must complete (``"ask"`` cases)."""

    @property
    def kind(self) -> str:
        """``act``, ``not`` (must not act) or ``ask``."""
        if self.expect is None:
            return "not"
        if self.expect in ASK_SPELLINGS:
            return "ask"
        return "act"

    def expected_calls(self) -> list[dict[str, Any]]:
        """The calls the whole case may make, in order."""
        want = self.after if self.kind == "ask" else self.expect
        if want is None or isinstance(want, str):
            return []
        return list(want) if isinstance(want, list) else [want]


@dataclass
class CaseOutcome:
    case: Case
    got: ToolCall | None
    """The first call made (any turn)."""
    ok: bool
    latency_s: float
    """Of the first turn (the request)."""
    decided_by: str = ""
    error: str = ""
    clarify: str = ""
    """The question asked instead of acting, if any."""
    calls: list[ToolCall] = field(default_factory=list)
    """Every call made, both turns."""
    after_question: bool = False
    """Done right only after the question was answered."""
    stopped: bool = False
    """The stop-phrase layer took the words before any agent (a safety stop)."""
    first_turn_calls: int = 0
    """Calls made by the request's own turn (before any answer)."""

    unexpected: list[ToolCall] = field(default_factory=list)
    """Calls made that the case did not expect (set by :func:`evaluate_agent`)."""

    @property
    def false_action(self) -> bool:
        """A call was made that the case did not expect (see the module docstring)."""
        return bool(self.unexpected)

    @property
    def wrong_arguments(self) -> bool:
        want = {w["name"] for w in self.case.expected_calls()}
        return any(c.name in want for c in self.unexpected)

    @property
    def missed(self) -> bool:
        return self.case.kind == "act" and not self.calls and not self.stopped


def _as_call(obj: Any, where: str) -> dict[str, Any]:
    if not isinstance(obj, dict) or "name" not in obj or not isinstance(obj.get("arguments", {}), dict):
        raise ConfigError(f'{where}: a call must be {{"name": ..., "arguments": {{...}}}}, got {obj!r}')
    return obj


def load_cases(path: str | Path) -> list[Case]:
    """Read a JSONL case file; a malformed line is an error naming file, line and the fix."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"{p}: case file not found")
    cases = []
    for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{p}:{n}"
        try:
            obj = json.loads(line)
            text, expect = obj["text"], obj["expect"]
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise ConfigError(f'{where}: expected {{"text": ..., "expect": ...}}: {exc}') from None
        if isinstance(expect, str) and expect not in ASK_SPELLINGS:
            raise ConfigError(f'{where}: expect must be null, "ask", a call or a list of calls, got {expect!r}')
        if isinstance(expect, list):
            expect = [_as_call(c, where) for c in expect]
        elif expect is not None and not isinstance(expect, str):
            expect = _as_call(expect, where)
        after = obj.get("after")
        if isinstance(after, list):
            after = [_as_call(c, where) for c in after]
        elif after is not None:
            after = _as_call(after, where)
        answer = obj.get("answer")
        if answer is not None and not isinstance(answer, str):
            raise ConfigError(f"{where}: answer must be the words the user says, got {answer!r}")
        cases.append(Case(str(text), expect, answer, after))
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


def unexpected_calls(case: Case, calls: Sequence[ToolCall], tools: Iterable[Tool]) -> list[ToolCall]:
    """The calls the case did not expect, in order (a false action each)."""
    want, tools = case.expected_calls(), list(tools)
    return [c for i, c in enumerate(calls) if i >= len(want) or not _matches(want[i], c, tools)]


def _matches(expect: dict[str, Any], got: ToolCall, tools: Iterable[Tool]) -> bool:
    if expect["name"] != got.name:
        return False
    t = next((t for t in tools if t.name == got.name), None)
    want = dict(expect.get("arguments") or {})
    have = dict(got.arguments)
    if t is not None:
        want, have = fill_defaults(t, want), fill_defaults(t, have)
    return _same(want, have)


def call_matches(expect: dict[str, Any] | str | None, got: ToolCall | None, tools: Iterable[Tool]) -> bool:
    """One call against one expectation (see the module docstring)."""
    if isinstance(expect, str):
        return False  # a question was expected; only the outcome knows whether one was asked
    if expect is None or got is None:
        return expect is None and got is None
    return _matches(expect, got, tools)


def calls_match(expected: Sequence[dict[str, Any]], got: Sequence[ToolCall], tools: Iterable[Tool]) -> bool:
    """The same calls in the same order."""
    tools = list(tools)
    return len(expected) == len(got) and all(_matches(e, g, tools) for e, g in zip(expected, got, strict=True))


def evaluate_agent(
    agent: Any,
    cases: Sequence[Case],
    make_ctx: Callable[[], Any] | None = None,
    *,
    stop_check: StopCheck | None = None,
) -> list[CaseOutcome]:
    """Run every case through ``agent.run`` on a fresh session: the request, and when the agent
    asks, the user's answer (see the module docstring)."""
    from edgevox.runtime.context import AgentContext

    tools = list(agent.tools)
    stop_tools = {t.name for t in tools if set(t.name.lower().split("_")) & STOP_VERBS}
    outcomes = []
    for i, case in enumerate(cases):
        if stop_check is not None and stop_check.match(case.text) is not None:
            want = case.expected_calls()
            ok = case.kind == "not" or (case.kind == "act" and all(w["name"] in stop_tools for w in want))
            outcomes.append(CaseOutcome(case, None, ok, 0.0, "stop phrase", stopped=True))
            continue
        ctx = make_ctx() if make_ctx else AgentContext(session_id=f"eval-{i}")
        start = time.perf_counter()
        result = agent.run(case.text, ctx)
        latency = time.perf_counter() - start
        _cancel_goals(result)
        calls = [r.call for r in result.tool_calls]
        question = str(result.data.get("clarify") or "")
        answered: list[ToolCall] = []
        if question and case.kind != "not":
            reply = agent.run(case.answer if case.answer is not None else _reply(agent, ctx, case, tools), ctx)
            _cancel_goals(reply)
            answered = [r.call for r in reply.tool_calls]
        if case.kind == "act":
            want = case.expected_calls()
            ok = calls_match(want, calls, tools) if not question else (not calls and calls_match(want, answered, tools))
        elif case.kind == "ask":
            ok = bool(question) and not calls
            if ok and case.after is not None and case.answer is not None:
                ok = calls_match(case.expected_calls(), answered, tools)
        else:
            ok = not calls
        all_calls = calls + answered
        outcomes.append(
            CaseOutcome(
                case,
                all_calls[0] if all_calls else None,
                ok,
                latency,
                str(result.data.get("decided_by", "")),
                result.error,
                question,
                all_calls,
                after_question=bool(question) and ok and case.kind == "act",
                first_turn_calls=len(calls),
                unexpected=unexpected_calls(case, all_calls, tools),
            )
        )
    return outcomes


def _reply(agent: Any, ctx: Any, case: Case, tools: list[Tool]) -> str:
    """What the user answers a question the case gives no answer for: "yes" when the robot
    proposes what the user asked for, else "no" (a user knows what they meant)."""
    pending = agent.pending_question(ctx.session_id) if hasattr(agent, "pending_question") else None
    if pending is None or pending.missing or pending.call is None:
        return NO  # a value or an open question: the case gives no words to answer it with
    proposed = [pending.call, *pending.more]
    return YES if calls_match(case.expected_calls(), proposed, tools) else NO


def _cancel_goals(result: Any) -> None:
    for goal in result.skills:  # the robot need not finish driving to score the call
        goal.cancel("evaluation case done")


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
        calls = [c for c in (decision.call, *decision.more) if c is not None]
        if case.kind == "act":
            ok = calls_match(case.expected_calls(), calls, tools)
        else:
            ok = not calls and case.kind == "not"
        outcomes.append(
            CaseOutcome(
                case, decision.call, ok, latency, "llm", calls=calls, unexpected=unexpected_calls(case, calls, tools)
            )
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


@dataclass(frozen=True)
class Summary:
    """The figures of one set of outcomes (``edgevox eval tools`` prints one per set)."""

    cases: int
    accuracy: float
    acts: int
    acts_right: int
    """Act cases done right, first time or after one question."""
    acts_after_question: int
    asks: int
    asks_asked: int
    nots: int
    false_actions: int
    wrong_arguments: int
    missed: int
    clarifications: int
    stopped: int

    @property
    def act_rate(self) -> float:
        return self.acts_right / self.acts if self.acts else 1.0

    @property
    def ask_rate(self) -> float:
        return self.asks_asked / self.asks if self.asks else 1.0


def summarize(outcomes: Sequence[CaseOutcome]) -> Summary:
    acts = [o for o in outcomes if o.case.kind == "act"]
    asks = [o for o in outcomes if o.case.kind == "ask"]
    return Summary(
        cases=len(outcomes),
        accuracy=accuracy(outcomes),
        acts=len(acts),
        acts_right=sum(o.ok for o in acts),
        acts_after_question=sum(o.after_question for o in acts),
        asks=len(asks),
        asks_asked=sum(bool(o.clarify) and o.first_turn_calls == 0 for o in asks),
        nots=sum(o.case.kind == "not" for o in outcomes),
        false_actions=false_actions(outcomes),
        wrong_arguments=sum(o.wrong_arguments for o in outcomes),
        missed=sum(o.missed for o in outcomes),
        clarifications=clarifications(outcomes),
        stopped=sum(o.stopped for o in outcomes),
    )


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
