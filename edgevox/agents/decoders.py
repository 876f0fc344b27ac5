"""How an agent decides its next step: call a tool (which, with what) or answer in words.

Over 400 lines because the four decoders are one concept (a decision) and share the
request/decision types, the prompt helpers (the tool menu, the first-token choice, literal
options) and the clarification store that makes a decision's question answerable. Split
candidates if it grows: :class:`Clarifications` (its own state and TTL) and the two
single-decode baselines (:class:`GrammarDecoder`, :class:`FreeTextDecoder`).

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
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol

from edgevox.agents.grammar import (
    arguments_grammar,
    arguments_schema,
    choice_grammar,
    schema_grammar,
    tool_call_grammar,
)
from edgevox.agents.parsing import looks_like_call, model_turn, parse_reply, parse_tool_calls, spoken_text
from edgevox.agents.resolver import ARGUMENTS_ONLY, WAY_QUESTION, SchemaResolver
from edgevox.agents.resolver_args import index_tool, is_string
from edgevox.agents.tools import Tool, ToolCall
from edgevox.language.intent import analyze, answer_polarity
from edgevox.language.matching import match
from edgevox.language.nlp import parse
from edgevox.language.numbers import find_numbers
from edgevox.language.requests import directions_in, has_subject, read_request
from edgevox.language.terms import stem, tokenize
from edgevox.language.words import DETERMINERS

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
    more: tuple[ToolCall, ...] = ()
    """Further calls the model asked for in the same message, run in order after ``call`` (with
    ``clarify``: the rest of the plan a yes confirms after ``proposed``)."""
    reply: str | None = None
    """The reply text, if the decoder already produced it (else the agent generates it). Model
    words go through :func:`~edgevox.agents.parsing.spoken_text` (the agent passes any decoder's
    reply through it again before saying it)."""
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
    call: ToolCall | None
    """The call the answer completes; None for an open question ("What should I do: rotate
    or change the altitude?" after a bare "turn"), which the answer completes as words."""
    missing: tuple[str, ...]
    question: str
    expires_at_s: float
    request: str = ""
    """The request the question was about: an answer completes it ("turn thirty degrees" +
    "left")."""
    more: tuple[ToolCall, ...] = ()
    """The rest of a plan the question confirms ("Did you mean fly back 2 meters, then land?")."""


@dataclass(frozen=True)
class ClarifyAnswer:
    kind: Literal["execute", "declined", "restate", "none"]
    """``execute`` ``call``; ``declined`` (say :data:`DECLINED_REPLY`); ``restate``: decide on
    ``text``, the request completed by the answer ("turn" + "left, ninety degrees"); ``none``:
    not an answer, handle the turn as usual (the question is dropped either way)."""
    call: ToolCall | None = None
    more: tuple[ToolCall, ...] = ()
    """Further calls of a confirmed plan, run in order after ``call``."""
    text: str = ""


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

    def ask(self, session_id: str, decision: Decision, request: str = "") -> None:
        """Remember ``decision.proposed`` (asked about ``request``) for ``session_id``'s next turn."""
        if decision.clarify is None or (decision.proposed is None and not request):
            return
        pending = PendingCall(
            decision.proposed, decision.missing, decision.clarify, self._clock() + self.ttl_s, request, decision.more
        )
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
        if p.call is None:  # an open question: the answer says what the request left out
            kind = analyze(text).kind
            if polarity is True or kind in ("negated", "report", "hypothetical", "question"):
                return ClarifyAnswer("none")
            return ClarifyAnswer("restate", text=f"{p.request.rstrip(' .!?')} {text}")
        if polarity is True and not p.missing:
            return ClarifyAnswer("execute", ToolCall(p.call.name, dict(p.call.arguments)), p.more)
        t = next((t for t in tools if t.name == p.call.name), None)
        if t is None:
            return ClarifyAnswer("none")
        if not p.missing:
            # "forward" after "Did you mean move along the row 3 meters?": a verbless answer
            # that, said with the request, makes the same tool's call sure: that call (the
            # answer confirmed it, or corrected its value)
            if not p.request or read_request(text).verbs or analyze(text).kind not in ("command", "statement"):
                return ClarifyAnswer("none")
            again = SchemaResolver(tools).propose(f"{p.request.rstrip(' .!?')} {text}")
            if again.call is None or again.call[0] != p.call.name or not again.sure:
                return ClarifyAnswer("none")
            # the tool asked about stays accepted (the answer took it up and said how); a
            # question about its values does not
            called = again.call[0]
            tool_only = not again.plan and not again.missing.get(called) and not again.problems.get(called)
            if again.clarify is not None and not tool_only:
                return ClarifyAnswer("none")
            own = SchemaResolver([t]).extract(t, text).found  # what the answer says by itself
            # "the speaker volume" after "Did you mean set the speaker volume 8?": its object
            names_it = match(read_request(text), index_tool(t).frame).objects >= 1.0
            if not (directions_in(text) or own or names_it) or any(again.call[1].get(k) != v for k, v in own.items()):
                return ClarifyAnswer("none")  # "to bench two": no part of the call
            return ClarifyAnswer("execute", ToolCall(again.call[0], dict(again.call[1])), p.more)
        # A new request ("climb thirty meters" after "What percent should I set the speed?") or
        # a remark is a new turn, not the value asked for; a bare value ("five then", "to the
        # right", "eighty centimetres") is the answer, whatever its grammar.
        kind = analyze(text).kind
        remark = kind == "statement" and has_subject(text) and not _value_as_subject(text, t, p.missing)
        if kind in ("negated", "report", "hypothetical") or remark:
            return ClarifyAnswer("none")  # "my friend set a timer for five minutes": a remark
        new = SchemaResolver(tools).propose(text)
        if new.call is not None and new.call[0] != p.call.name and new.sure and new.clarify is None:
            return ClarifyAnswer("none")
        if p.question.startswith(WAY_QUESTION) and not _says_a_way(text, t):
            return ClarifyAnswer("none")  # "the highest it goes then" after "Which way should I drive?"
        # "two meters", "the bedroom": the value the question asked for completes the call;
        # "left" (after "Which way should I turn?") completes it together with the request.
        resolver = SchemaResolver([t])
        ex = alone = resolver.extract(t, text)
        filled = {k: ex.found[k] for k in p.missing if k in ex.found}
        if p.request and not directions_in(text) and directions_in(p.request):
            # "twenty centimetres" after "back up": the direction said before holds.
            ex = resolver.extract(t, f"{text} {directions_in(p.request)}")
            filled = {k: ex.found[k] for k in p.missing if k in ex.found}
        if len(filled) < len(p.missing) and not p.question.startswith(WAY_QUESTION):
            # "two metres" after "How far should I move along the row?": the question asked how
            # far, not which way; the answer is that far forward where forward is positive
            signs = index_tool(t).signs
            ahead = [k for k in p.missing if k not in filled and k in signs and signs[k].forward_positive]
            if ahead and not directions_in(text) and not _says_a_way(text, t):  # no way said, of any kind
                ex = resolver.extract(t, f"{text} forward")
                filled |= {k: ex.found[k] for k in ahead if k in ex.found}
        if len(filled) < len(p.missing) and p.request:
            # "make it ten" after "climb fifteen metres" (too far): the new number, and the
            # words of the request that set the sign ("climb"), which still hold.
            signs = index_tool(t).signs
            cues = [w for w, _, _ in tokenize(p.request) if any(r.sign([stem(w)]) in (-1, 1) for r in signs.values())]
            if cues:
                ex = resolver.extract(t, f"{text} {' '.join(cues)}")
                filled |= {k: ex.found[k] for k in p.missing if k in ex.found and k not in filled}
        for k in p.missing:
            if k not in filled and is_string(t, k) and not read_request(text).verbs:
                # "SKU 1200" after "What sku ...?": a verbless answer is the value itself,
                # without the parameter's own name and any determiner
                name = {w for w in k.lower().split("_") if w}
                kept = [
                    w for w in re.findall(r"[\w'-]+", text) if w.lower() not in name and w.lower() not in DETERMINERS
                ]
                if kept:
                    filled[k] = " ".join(kept)
        if len(filled) < len(p.missing) and p.request:
            # "left" after "turn thirty degrees": the number said before holds.
            for context in (f"{p.request}, {text}",):
                more = resolver.extract(t, context)
                filled |= {k: more.found[k] for k in p.missing if k in more.found and k not in filled}
        if len(filled) < len(p.missing):
            return ClarifyAnswer("none")
        # "thirty percent" after "dim the reading light" asked on or off: a value the answer
        # says for another parameter the call lacks is kept, never lost
        said = {k: v for k, v in alone.found.items() if k not in p.call.arguments}
        return ClarifyAnswer("execute", ToolCall(p.call.name, {**p.call.arguments, **said, **filled}))


def _says_a_way(text: str, t: Tool) -> bool:
    """An answer to "which way?" says a way: a word of one of the tool's sign conventions
    ("back", "raise it"), or a signed number ("minus thirty"); a new amount alone does not."""
    words = [w for w, _, _ in tokenize(text)]
    stems = [stem(w) for w in words]
    return any(r.sign(stems) in (-1, 1) for r in index_tool(t).signs.values()) or any(
        s.signed for s in find_numbers(words)
    )


def _value_as_subject(text: str, t: Tool, missing: Sequence[str]) -> bool:
    """ "three is fine", "the kitchen will do": the subject is the value asked for, approved."""
    subjects = [tok for tok in parse(text) if tok.dep_ in ("nsubj", "nsubjpass")]
    if len(subjects) != 1:
        return False
    said = " ".join(w.text for w in subjects[0].subtree)
    found = SchemaResolver([t]).extract(t, said).found
    return all(k in found for k in missing)


class ToolDecoder(Protocol):
    def decide(self, request: DecisionRequest) -> Decision: ...


def _tool_lines(tools: Sequence[Tool]) -> str:
    return "\n".join(f"- {t.name}: {t.description}" for t in tools)


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def _assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


class TwoStageDecoder:
    """Tool name under a choice grammar, then arguments under that tool's grammar.

    Latency (issue 11: the constrained decision took 2-12 s on 2 cores). On a CPU the
    cost is prompt tokens the KV cache does not hold (llama.cpp keeps one sequence and
    reuses only the longest common token prefix with the previous call) and decode
    steps, not the grammar (its compile is cached and it adds a few ms per token). So:

    - **The conversation is the prefix.** Both stages send the agent's own prompt
      (system, history, the user's turn), with the menu of candidate tools appended to
      the user's turn, and the argument question as a follow-up turn after the chosen
      name. The system prompt and history are what the previous turn's reply left in
      the KV cache, stage two extends stage one's prompt, and the reply after ``none``
      re-reads only a few tokens. Rejected: a separate system prompt per stage (the old
      layout: ~200 + ~140 tokens re-read on every decision, because each stage and the
      reply evicted the others' prefix).
    - **Stop at the first token that decides.** A name (or an enum value) is read with
      ``max_tokens=1``: the grammar makes the first token a prefix of an option, and one
      option that alone starts with it is the answer (prefill only, no decode step).
      Only when several options share the prefix is the name decoded in full.
    - **Only what is missing.** With ``fixed`` (the resolver's values), each missing
      required argument is one small value decode; values already known are never
      re-generated token by token as JSON. Without ``fixed`` the whole arguments object
      is decoded under :func:`arguments_grammar`, capped at ``args_max_tokens``.
    """

    def __init__(
        self,
        *,
        name_max_tokens: int = 8,
        args_max_tokens: int = 64,
        value_max_tokens: int = 16,
        menu_chars: int = 64,
        menu_examples: bool = False,
    ) -> None:
        self.menu_chars = menu_chars
        self.menu_examples = menu_examples
        self.name_max_tokens = name_max_tokens
        self.args_max_tokens = args_max_tokens
        self.value_max_tokens = value_max_tokens

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
        messages = _with_menu(request, tools, self.menu_chars, self.menu_examples)
        raw_name = _choose(request.generate, messages, names, self.name_max_tokens)
        if raw_name not in names or raw_name == NONE_CHOICE:
            return Decision(None, decided_by="llm", raw=raw_name)
        chosen = next(t for t in tools if t.name == raw_name)
        known = (fixed or {}).get(chosen.name, {})
        props = chosen.parameters.get("properties", {})
        if not props or (fixed is not None and all(k in known for k in chosen.required)):
            # Nothing the model must fill: what the resolver found plus declared defaults.
            return Decision(ToolCall(chosen.name, dict(known)), decided_by="llm", raw=raw_name)
        choices = (string_choices or {}).get(chosen.name)
        if fixed is not None:
            args, raw_args = self._missing_values(request, messages, chosen, known, choices)
            return Decision(ToolCall(chosen.name, args), decided_by="llm", raw=f"{raw_name} {raw_args}")
        examples = "; ".join(
            f"{u!r} -> {json.dumps(a)}" for u, a in chosen.examples[:2] if a is not None
        )  # fmt: skip
        ask = f"The arguments of {chosen.name} as JSON" + (f" (for example {examples})" if examples else "") + "."
        amsgs = [*messages, _assistant(chosen.name), _user(ask)]
        grammar = arguments_grammar(chosen, fixed=known, string_choices=choices)
        raw_args = request.generate(amsgs, grammar=grammar, max_tokens=self.args_max_tokens)
        try:
            args = json.loads(raw_args)
        except json.JSONDecodeError:
            args = dict(known)  # cut off (max_tokens/cancel): validation will name what is missing
        if not isinstance(args, dict):
            args = dict(known)  # an engine that ignored the grammar: validation names what is missing
        return Decision(ToolCall(chosen.name, args), decided_by="llm", raw=f"{raw_name} {raw_args}")

    def _missing_values(
        self,
        request: DecisionRequest,
        messages: list[dict[str, Any]],
        tool: Tool,
        known: dict[str, Any],
        choices: dict[str, list[str]] | None,
    ) -> tuple[dict[str, Any], str]:
        """Each missing required argument of ``tool`` as one value decode (a follow-up turn)."""
        args = dict(known)
        props = arguments_schema(tool, string_choices=choices).get("properties", {})
        raws = []
        for pname in [p for p in tool.required if p not in known]:
            schema = props[pname]
            # Just the name: the grammar says what a value may be, and each token here is read.
            ask = f"{pname.replace('_', ' ')}?"
            vmsgs = [*messages, _assistant(tool.name), _user(ask)]
            options = _literal_options(schema)
            if options is not None:
                pick = _choose(request.generate, vmsgs, list(options), self.value_max_tokens)
                raw = json.dumps(options[pick]) if pick in options else pick
            else:
                raw = request.generate(vmsgs, grammar=schema_grammar(schema), max_tokens=self.value_max_tokens)
            raws.append(raw)
            try:
                args[pname] = json.loads(raw)
            except json.JSONDecodeError:
                break  # cut off (cancel): validation will name what is missing
        return args, " ".join(raws)


def _short(text: str, max_chars: int) -> str:
    """``text``'s first sentence, cut to at most ``max_chars`` at a clause (else a word) boundary."""
    text = text.strip().split(". ")[0].rstrip(".")
    if len(text) <= max_chars:
        return text
    head = text[: max_chars + 1]
    clause = max(head.rfind(", "), head.rfind(" ("), head.rfind("; "))
    cut = clause if clause > max_chars // 2 else head.rfind(" ")
    return text[: cut if cut > 0 else max_chars].rstrip(",;: ")


def _with_menu(request: DecisionRequest, tools: Sequence[Tool], max_chars: int, examples: bool) -> list[dict[str, Any]]:
    """The agent's conversation with a compact menu of ``tools`` appended to the user's last turn.

    Every token here is read on each decision (it follows the user's words, so the cache never
    holds it): descriptions are cut to ``max_chars`` and one example each is optional."""
    items = []
    for t in tools:
        ex = next((u for u, _ in t.examples[:1]), "") if examples else ""
        items.append(f"{t.name}: {_short(t.description, max_chars)}" + (f' ("{ex}")' if ex else ""))
    ex = next(iter(request.reply_examples[:1]), "") if examples else ""
    items.append(f"{NONE_CHOICE}: just talking, no action" + (f' ("{ex}")' if ex else ""))
    messages = [dict(m) for m in request.messages] or [_user(request.text)]
    last = messages[-1]
    if last.get("role") != "user":
        messages.append(last := _user(request.text))
    said = str(last.get("content", ""))
    about = "" if request.text.strip() in said else f' for "{request.text}"'
    messages[-1] = {**last, "content": f"{said}\n(Which action{about}? " + "; ".join(items) + ".)"}
    return messages


def _choose(generate: Generate, messages: list[dict[str, Any]], options: Sequence[str], max_tokens: int) -> str:
    """One of ``options`` under a choice grammar, stopping at the first token that decides.

    The first token is sampled from the prompt's own logits (no decode step); when it starts
    exactly one option, that option is the answer. Otherwise the choice is decoded in full
    (the same prompt again: fully cached)."""
    grammar = choice_grammar(options)
    first = generate(messages, grammar=grammar, max_tokens=1)
    starting = [o for o in options if o.startswith(first)] if first else []
    if len(starting) == 1:
        return starting[0]
    return generate(messages, grammar=grammar, max_tokens=max_tokens).strip()


def _literal_options(schema: dict[str, Any]) -> dict[str, Any] | None:
    """A value that is one of a few literals (enum, choices, boolean), as {words: value}.

    Strings are offered bare (a JSON quote would be a first token every option shares)."""
    if "const" in schema:
        values = [schema["const"]]
    elif "enum" in schema or "x-choices" in schema:
        values = list(schema.get("enum", schema.get("x-choices", [])))
    elif schema.get("type") == "boolean":
        values = [True, False]
    else:
        return None
    options = {v if isinstance(v, str) else json.dumps(v): v for v in values}
    return options if len(options) == len(values) and all(options) else None


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
        if proposal.clarify is not None and proposal.open_question:
            return Decision(None, decided_by="schema", details=details, clarify=proposal.clarify)
        if proposal.clarify is not None and proposal.call is not None:
            name, args = proposal.call
            missing = tuple(proposal.missing.get(name, []))
            return Decision(
                None,
                more=tuple(ToolCall(n, dict(a)) for n, a in proposal.plan[1:]),
                decided_by="schema",
                details=details,
                clarify=proposal.clarify,
                proposed=ToolCall(name, dict(args)),
                missing=missing,
            )
        if proposal.sure:
            call = ToolCall(proposal.call[0], proposal.call[1]) if proposal.call else None
            more = tuple(ToolCall(name, dict(args)) for name, args in proposal.plan[1:])
            return Decision(call, more=more, decided_by="schema", details=details)
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
        if checked.call is not None and (
            proposal.reason == ARGUMENTS_ONLY or checked.call.name not in proposal.sure_tools
        ):
            # The model's choice passes the frame checks a rule decision passes: a tool the
            # request's verb or object does not name surely ("make it brighter in the bedroom"
            # only matched the room) is the model's reading alone. Ask before acting.
            call = checked.call
            return Decision(
                None, decided_by=checked.decided_by, raw=checked.raw,
                details={**checked.details, "llm_call": f"{call.name}({call.arguments})"},
                clarify=f"Did you mean {resolver.describe(call.name, dict(call.arguments))}?", proposed=call,
            )  # fmt: skip
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

        A value the resolver found unusable is asked for; a required value the LLM filled in
        (the user never said it) is asked for too; an optional one is dropped (its declared
        default applies).
        """
        assert decision.call is not None
        call: ToolCall = decision.call
        tool = next((t for t in resolver.tools if t.name == call.name), None)
        if tool is None:
            return decision
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
        unsaid = [p for p in call.arguments if p not in said]  # a string the model cut from the words too
        guessed = [p for p in unsaid if p in tool.required]
        # An optional value the user never said keeps its declared default, not the LLM's guess.
        call = ToolCall(
            call.name,
            {k: v for k, v in call.arguments.items() if k in said or k not in unsaid or k in guessed},
            call.id,
        )
        if guessed:
            # a required value nobody said is asked for, never proposed ("lift the forks": how
            # high? not "Did you mean 10.5 centimetres?"); the question names the tool
            kept = {k: v for k, v in call.arguments.items() if k not in guessed}
            return ask(resolver.question(call.name, guessed[0]), ToolCall(call.name, kept), tuple(guessed))
        return decision


class GrammarDecoder:
    """One decode under the full grammar: a call of any tool, or ``{"reply": ...}``."""

    def __init__(self, max_tokens: int = 96) -> None:
        self.max_tokens = max_tokens

    def decide(self, request: DecisionRequest) -> Decision:
        system = (
            "To act, answer with JSON "
            '{"name": <tool>, "arguments": {...}}; otherwise {"reply": <words>}. Tools:\n'
            f"{_tool_lines(request.tools)}"
        )
        messages = _with_system(request, system)
        raw = request.generate(messages, grammar=tool_call_grammar(request.tools), max_tokens=self.max_tokens)
        calls = parse_tool_calls(raw, request.tools)
        if calls:
            return Decision(calls[0], more=tuple(calls[1:]), raw=raw)
        reply = parse_reply(raw)
        words = spoken_text(reply, request.tools) if reply is not None else ""
        return Decision(None, reply=words or None, raw=raw)


class FreeTextDecoder:
    """No grammar: prompt with the tool specs and parse any common call format from the text."""

    def __init__(self, max_tokens: int = 96) -> None:
        self.max_tokens = max_tokens

    def decide(self, request: DecisionRequest) -> Decision:
        specs = "\n".join(json.dumps(t.spec()) for t in request.tools)
        system = (
            f"You can call these tools:\n{specs}\n"
            'To call one, answer only <tool_call>{"name": <tool>, "arguments": {...}}</tool_call>. '
            "Otherwise answer in words."
        )
        messages = _with_system(request, system)
        raw = request.generate(messages, max_tokens=self.max_tokens)
        calls = parse_tool_calls(raw, request.tools)
        if calls:
            return Decision(calls[0], more=tuple(calls[1:]), raw=raw)
        turn = model_turn(raw)  # the chat template's tokens are not a call attempt
        if looks_like_call(turn, request.tools):
            # A call that did not parse (cut off, garbled): never speak it, never guess it; ask.
            return Decision(None, reply=GARBLED_CALL_REPLY, raw=raw, details={"unparsed_call": raw[:200]})
        return Decision(None, reply=spoken_text(turn, request.tools) or None, raw=raw)


def _with_system(request: DecisionRequest, tool_text: str) -> list[dict[str, Any]]:
    """The conversation with ``tool_text`` added to its system prompt.

    The agent's own system message (its instructions, and a handoff's "Context from the
    previous agent") is kept and extended; without one (``instructions=""``) a system
    message is added. Rejected: dropping ``messages[0]`` as if it were always the system
    prompt - without instructions that was the user's request."""
    messages = [dict(m) for m in request.messages] or [_user(request.text)]
    if messages[0].get("role") == "system":
        base = str(messages.pop(0).get("content", ""))
    else:
        base = request.instructions
    return [{"role": "system", "content": f"{base}\n{tool_text}".strip()}, *messages]
