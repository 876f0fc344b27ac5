"""How an agent decides its next step: call a tool (which, with what) or answer in words.

A decoder gets a :class:`DecisionRequest` and returns a :class:`Decision`. It talks
to the LLM only through ``request.generate`` (which the agent wraps with hooks, the
LLM lock and the cancel token). Decoders, cheapest first:

- :class:`SchemaFirstDecoder` (default): the schema resolver (``resolver.py``)
  decides when it is sure (no LLM call at all); otherwise a :class:`TwoStageDecoder`
  restricted to the resolver's candidate tools, with the arguments it already found
  fixed in the grammar and string arguments limited to spans of the user's words.
- :class:`TwoStageDecoder`: the LLM picks a tool name (or ``none``) under a choice
  grammar, then fills that tool's arguments under a per-tool grammar. Two short,
  tightly constrained decodes are far easier for a 135M model than one free JSON.
- :class:`GrammarDecoder`: one decode under the full call-or-reply grammar.
- :class:`FreeTextDecoder`: no grammar; parses whatever format the model emits
  (for engines without grammars, and the unconstrained baseline of ``eval tools``).

Safety first (``intent.py``): :class:`SchemaFirstDecoder` acts only on a request. A
negated, reported, hypothetical or stated utterance is answered in words without asking
the LLM to pick a tool; a question may only reach a *query* tool. When an action is
likely but an argument is missing, guessed by the LLM, in another unit's dimension,
out of bounds or ambiguous, the decision carries a ``clarify`` question and the
``proposed`` call instead of a call: the agent asks, and :class:`Clarifications` keeps
the proposal for the session's next turn ("yes" runs it, "no" drops it, a value
completes it). Rejected alternative: letting the LLM fill the gap. A 135M model
guesses ("my room" -> "living room"), and a guess that moves a robot is a false action.

Only the first hop (the user's request) is decided from the user's words; after a
tool ran, :class:`SchemaFirstDecoder` answers in words unless ``chain_calls`` is set
(then its fallback decides), because re-reading the same request would repeat the call.
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol

from edgevox.agents.grammar import arguments_grammar, choice_grammar, tool_call_grammar
from edgevox.agents.intent import analyze, answer_polarity
from edgevox.agents.parsing import looks_like_call, parse_reply, parse_tool_calls
from edgevox.agents.resolver import SchemaResolver, tokenize
from edgevox.agents.tools import Tool, ToolCall

NONE_CHOICE = "none"
"""The choice that means "answer in words" in a tool-name grammar."""

Generate = Callable[..., str]

GARBLED_CALL_REPLY = "Sorry, I did not get that. Could you say it another way?"
"""Said when the model tried to call a tool but its call could not be read: nothing runs."""


@dataclass
class DecisionRequest:
    text: str
    """The user's request, as spoken."""
    messages: list[dict[str, Any]]
    """The conversation so far, ending with the request (and any tool results)."""
    tools: Sequence[Tool]
    generate: Generate
    """``generate(messages, *, grammar=None, max_tokens=64) -> str``."""
    instructions: str = ""
    hop: int = 0
    """0 for the first decision of a run, then 1, 2... after tool results."""
    reply_examples: Sequence[str] = ()
    """Example requests that are answered in words (few-shot for ``none``)."""


@dataclass
class Decision:
    call: ToolCall | None
    """The tool to call, or None to answer in words."""
    reply: str | None = None
    """The reply text, if the decoder already produced it (else the agent generates it)."""
    decided_by: str = "llm"
    """``"schema"`` (fast path, no LLM), ``"llm"``."""
    raw: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    clarify: str | None = None
    """A short question to ask instead of acting ("Did you mean turn right 180 degrees?");
    ``call`` is then None and ``proposed`` the call a yes (or the missing value) completes."""
    proposed: ToolCall | None = None
    missing: tuple[str, ...] = ()
    """Arguments of ``proposed`` the answer must supply (a yes alone cannot complete it)."""


CLARIFY_TTL_S = 30.0
"""How long a clarifying question waits for its answer."""
MAX_PENDING_SESSIONS = 256
"""Pending questions kept at most (oldest dropped first)."""
DECLINED_REPLY = "Okay, I won't."


@dataclass(frozen=True)
class PendingCall:
    call: ToolCall
    missing: tuple[str, ...]
    question: str
    expires_at_s: float


@dataclass(frozen=True)
class ClarifyAnswer:
    kind: Literal["execute", "declined", "none"]
    """``execute`` ``call``; ``declined`` (say :data:`DECLINED_REPLY`); ``none``: not an answer,
    handle the turn as usual (the question is dropped either way)."""
    call: ToolCall | None = None


class Clarifications:
    """Calls proposed with a question, one per session, waiting for the next turn's answer.

    Thread-safe; bounded (:data:`MAX_PENDING_SESSIONS`) and expiring (:data:`CLARIFY_TTL_S`),
    so an unanswered question never acts later and the store never grows without bound.
    """

    def __init__(
        self,
        ttl_s: float = CLARIFY_TTL_S,
        max_sessions: int = MAX_PENDING_SESSIONS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ttl_s = ttl_s
        self.max_sessions = max_sessions
        self._clock = clock
        self._pending: OrderedDict[str, PendingCall] = OrderedDict()
        self._lock = threading.Lock()

    def ask(self, session_id: str, decision: Decision) -> None:
        """Remember ``decision.proposed`` for ``session_id``'s next turn."""
        if decision.proposed is None or decision.clarify is None:
            return
        pending = PendingCall(decision.proposed, decision.missing, decision.clarify, self._clock() + self.ttl_s)
        with self._lock:
            self._pending.pop(session_id, None)
            self._pending[session_id] = pending
            while len(self._pending) > self.max_sessions:
                self._pending.popitem(last=False)

    def pending(self, session_id: str) -> PendingCall | None:
        with self._lock:
            p = self._pending.get(session_id)
        return p if p is not None and p.expires_at_s > self._clock() else None

    def answer(self, session_id: str, text: str, tools: Sequence[Tool]) -> ClarifyAnswer:
        """Read ``text`` as the answer to the session's pending question (and drop it)."""
        with self._lock:
            p = self._pending.pop(session_id, None)
        if p is None or p.expires_at_s <= self._clock():
            return ClarifyAnswer("none")
        polarity = answer_polarity(text)
        if polarity is False:
            return ClarifyAnswer("declined")
        if polarity is True and not p.missing:
            return ClarifyAnswer("execute", ToolCall(p.call.name, dict(p.call.arguments)))
        t = next((t for t in tools if t.name == p.call.name), None)
        if t is None or not p.missing:
            return ClarifyAnswer("none")
        # A new request ("climb thirty meters" after "What percent should I set the speed?") or
        # a remark is a new turn, not the value asked for.
        if analyze(text).kind not in ("command", "question"):
            return ClarifyAnswer("none")
        new = SchemaResolver(tools).propose(text)
        if new.call is not None and new.call[0] != p.call.name:
            return ClarifyAnswer("none")
        # "two meters", "the bedroom": the value the question asked for completes the call.
        ex = SchemaResolver([t]).extract(t, text)
        filled = {k: ex.found[k] for k in p.missing if k in ex.found}
        if len(filled) < len(p.missing):
            return ClarifyAnswer("none")
        return ClarifyAnswer("execute", ToolCall(p.call.name, {**p.call.arguments, **filled}))


class ToolDecoder(Protocol):
    def decide(self, request: DecisionRequest) -> Decision: ...


def _tool_lines(tools: Sequence[Tool]) -> str:
    return "\n".join(f"- {t.name}: {t.description}" for t in tools)


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def _assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


class TwoStageDecoder:
    """Tool name under a choice grammar, then arguments under that tool's grammar."""

    def __init__(self, *, name_max_tokens: int = 8, args_max_tokens: int = 64) -> None:
        self.name_max_tokens = name_max_tokens
        self.args_max_tokens = args_max_tokens

    def decide(
        self,
        request: DecisionRequest,
        *,
        candidates: Sequence[str] | None = None,
        fixed: dict[str, dict[str, Any]] | None = None,
        string_choices: dict[str, dict[str, list[str]]] | None = None,
    ) -> Decision:
        tools = [t for t in request.tools if candidates is None or t.name in candidates]
        names = [t.name for t in tools] + [NONE_CHOICE]
        system = (
            f"{request.instructions}\n"
            "Choose the action that does what the user asks, or none if they are only talking "
            "(greetings, questions, chat). Actions:\n"
            f"{_tool_lines(tools)}\n- {NONE_CHOICE}: no action, answer in words"
        ).strip()
        messages: list[dict[str, Any]] = [{"role": "system", "content": system}]
        for t in tools:
            for utterance, _ in t.examples[:2]:
                messages += [_user(utterance), _assistant(t.name)]
        for utterance in request.reply_examples[:2]:
            messages += [_user(utterance), _assistant(NONE_CHOICE)]
        messages.append(_user(request.text))
        raw_name = request.generate(messages, grammar=choice_grammar(names), max_tokens=self.name_max_tokens).strip()
        if raw_name not in names or raw_name == NONE_CHOICE:
            return Decision(None, decided_by="llm", raw=raw_name)
        chosen = next(t for t in tools if t.name == raw_name)
        known = (fixed or {}).get(chosen.name, {})
        props = chosen.parameters.get("properties", {})
        if not props or (fixed is not None and all(k in known for k in chosen.required)):
            # Nothing the model must fill: what the resolver found plus declared defaults.
            return Decision(ToolCall(chosen.name, dict(known)), decided_by="llm", raw=raw_name)
        args_system = (
            f"Fill in the arguments of {chosen.name} ({chosen.description}) as JSON. "
            f"Schema: {json.dumps(chosen.parameters.get('properties', {}))}"
        )
        amsgs: list[dict[str, Any]] = [{"role": "system", "content": args_system}]
        for utterance, args in chosen.examples[:3]:
            if args is not None:
                amsgs += [_user(utterance), _assistant(json.dumps(args))]
        amsgs.append(_user(request.text))
        grammar = arguments_grammar(chosen, fixed=known, string_choices=(string_choices or {}).get(chosen.name))
        raw_args = request.generate(amsgs, grammar=grammar, max_tokens=self.args_max_tokens)
        try:
            args = json.loads(raw_args)
        except json.JSONDecodeError:
            args = dict(known)  # cut off (max_tokens/cancel): validation will name what is missing
        return Decision(ToolCall(chosen.name, args), decided_by="llm", raw=f"{raw_name} {raw_args}")


def utterance_spans(text: str, max_words: int = 6) -> list[str]:
    """Every run of up to ``max_words`` consecutive words of ``text``, as written."""
    toks = tokenize(text)
    spans = []
    for i in range(len(toks)):
        for j in range(i, min(len(toks), i + max_words)):
            spans.append(text[toks[i][1] : toks[j][2]])
    return spans


class SchemaFirstDecoder:
    """The schema resolver when it is sure; the LLM (constrained to its candidates) when not."""

    def __init__(self, fallback: TwoStageDecoder | None = None, *, chain_calls: bool = False, **resolver_options: Any):
        self.fallback = fallback or TwoStageDecoder()
        self.chain_calls = chain_calls
        self._resolver_options = resolver_options
        self._resolvers: dict[tuple[int, ...], SchemaResolver] = {}

    def resolver(self, tools: Sequence[Tool]) -> SchemaResolver:
        key = tuple(id(t) for t in tools)
        r = self._resolvers.get(key)
        if r is None:
            r = self._resolvers[key] = SchemaResolver(tools, **self._resolver_options)
        return r

    def decide(self, request: DecisionRequest) -> Decision:
        if request.hop > 0:
            if self.chain_calls:
                return self.fallback.decide(request)
            return Decision(None, decided_by="schema", details={"reason": "after a tool result: answer"})
        resolver = self.resolver(request.tools)
        proposal = resolver.propose(request.text)
        intent = proposal.intent
        details: dict[str, Any] = {
            "reason": proposal.reason,
            "candidates": proposal.candidates,
            "intent": intent.kind if intent else "",
        }
        if proposal.clarify is not None and proposal.call is not None:
            name, args = proposal.call
            missing = tuple(proposal.missing.get(name, []))
            return Decision(
                None,
                decided_by="schema",
                details=details,
                clarify=proposal.clarify,
                proposed=ToolCall(name, dict(args)),
                missing=missing,
            )
        if proposal.sure:
            call = ToolCall(proposal.call[0], proposal.call[1]) if proposal.call else None
            return Decision(call, decided_by="schema", details=details)
        if intent is not None and intent.kind not in ("command", "question"):
            return Decision(None, decided_by="schema", details=details)  # never reached: kept as a guard
        text = intent.clause if intent is not None else request.text
        spans = utterance_spans(text)
        string_choices = {
            name: {p: spans for p, s in t.parameters.get("properties", {}).items() if s.get("type") == "string"}
            for t in request.tools
            if (name := t.name) in proposal.candidates
        }
        decision = self.fallback.decide(
            replace(request, text=text),
            candidates=proposal.candidates,
            fixed={n: proposal.found.get(n, {}) for n in proposal.candidates},
            string_choices=string_choices,
        )
        decision.details.update(details)
        if decision.call is None:
            return decision
        checked = self._check_llm_call(resolver, decision, proposal)
        if checked.call is not None and intent is not None and intent.confirm:
            call = checked.call
            question = resolver.confirm_question(intent.confirm, call.name, dict(call.arguments))
            return Decision(
                None, decided_by=checked.decided_by, raw=checked.raw, details=checked.details,
                clarify=question, proposed=call,
            )  # fmt: skip
        return checked

    @staticmethod
    def _check_llm_call(resolver: SchemaResolver, decision: Decision, proposal: Any) -> Decision:
        """The LLM picked a tool the resolver was unsure of: act only on what the user said.

        A value the resolver found unusable is asked for; a required non-string value the LLM
        filled in (the user never said it) is proposed with "Did you mean ...?"; an optional
        one is dropped (its declared default applies).
        """
        call = decision.call
        assert call is not None
        tool = next((t for t in resolver.tools if t.name == call.name), None)
        if tool is None:
            return decision
        props = tool.parameters.get("properties", {})
        said = proposal.found.get(call.name, {})
        problems = proposal.problems.get(call.name, {})

        def ask(question: str, proposed: ToolCall, missing: tuple[str, ...] = ()) -> Decision:
            details = {**decision.details, "llm_call": f"{call.name}({call.arguments})"}
            return Decision(
                None, decided_by=decision.decided_by, raw=decision.raw, details=details,
                clarify=question, proposed=proposed, missing=missing,
            )  # fmt: skip

        for pname, why in problems.items():
            kept = {k: v for k, v in call.arguments.items() if k in said}
            return ask(resolver.question(call.name, pname, why), ToolCall(call.name, kept), (pname,))
        unsaid = [
            p
            for p in call.arguments
            if p not in said and (props.get(p, {}).get("type") != "string" or "enum" in props.get(p, {}))
        ]
        guessed = [p for p in unsaid if p in tool.required]
        # An optional value the user never said keeps its declared default, not the LLM's guess.
        call = ToolCall(
            call.name,
            {k: v for k, v in call.arguments.items() if k in said or k not in unsaid or k in guessed},
            call.id,
        )
        if guessed:
            return ask(f"Did you mean {resolver.describe(call.name, call.arguments)}?", call)
        return decision


class GrammarDecoder:
    """One decode under the full grammar: a call of any tool, or ``{"reply": ...}``."""

    def __init__(self, max_tokens: int = 96) -> None:
        self.max_tokens = max_tokens

    def decide(self, request: DecisionRequest) -> Decision:
        system = (
            f"{request.instructions}\nTo act, answer with JSON "
            '{"name": <tool>, "arguments": {...}}; otherwise {"reply": <words>}. Tools:\n'
            f"{_tool_lines(request.tools)}"
        ).strip()
        messages = [{"role": "system", "content": system}, *request.messages[1:]]
        raw = request.generate(messages, grammar=tool_call_grammar(request.tools), max_tokens=self.max_tokens)
        calls = parse_tool_calls(raw, request.tools)
        if calls:
            return Decision(calls[0], raw=raw)
        return Decision(None, reply=parse_reply(raw), raw=raw)


class FreeTextDecoder:
    """No grammar: prompt with the tool specs and parse any common call format from the text."""

    def __init__(self, max_tokens: int = 96) -> None:
        self.max_tokens = max_tokens

    def decide(self, request: DecisionRequest) -> Decision:
        specs = "\n".join(json.dumps(t.spec()) for t in request.tools)
        system = (
            f"{request.instructions}\nYou can call these tools:\n{specs}\n"
            'To call one, answer only <tool_call>{"name": <tool>, "arguments": {...}}</tool_call>. '
            "Otherwise answer in words."
        ).strip()
        messages = [{"role": "system", "content": system}, *request.messages[1:]]
        raw = request.generate(messages, max_tokens=self.max_tokens)
        calls = parse_tool_calls(raw, request.tools)
        if calls:
            return Decision(calls[0], raw=raw)
        if looks_like_call(raw, request.tools):
            # A call that did not parse (cut off, garbled): never speak it, never guess it; ask.
            return Decision(None, reply=GARBLED_CALL_REPLY, raw=raw, details={"unparsed_call": raw[:200]})
        return Decision(None, reply=raw.strip(), raw=raw)
