"""A deterministic tool-call proposer from the tools' own code (the fast path).

Over 400 lines because the decisions (act, plan a compound request, ask, answer in words) and
the questions they ask share the index and the :class:`Proposal`; the English is in
:mod:`edgevox.language`, the argument values in :mod:`edgevox.agents.resolver_args`.

Small models (SmolLM2-135M) pick the wrong tool or garble arguments for most commands, and
each decode costs hundreds of milliseconds on a CPU. Most robot commands, though, say what
they want in words the tools' names and docstrings already hold. The :class:`SchemaResolver`
reads each tool once into a frame (:mod:`edgevox.language.frames`: its verbs with particles,
its objects, whether it only reads state or is a drastic no-argument action, each
parameter's unit, sign convention, bounds and enum words), reads each command clause into a
request frame (:mod:`edgevox.language.requests`) and matches them by meaning
(:mod:`edgevox.language.matching`: the same lemma and particle, WordNet synonyms, the object;
argument values only rank tools a verb or an object named). Arguments come from
:mod:`edgevox.agents.resolver_args`.

:meth:`SchemaResolver.propose` returns a :class:`Proposal`: a call (or a plan of calls for a
compound request, or ``None`` = answer in words), whether it is *sure*, and a ``clarify``
question when an action is likely but the tool, a value, a direction or a bound is unclear
(the agent asks instead of guessing; the answer completes the call). When two tools are
close, the agent asks the LLM, constrained to the candidates; its choice acts only when the
rules alone would act on that tool (``Proposal.sure_tools``), else it is confirmed.

Only requests act (``language/intent.py``): a negated clause, a question (except to a
reading tool), a report, a statement or a hypothetical is answered in words, and only the
command clauses are resolved ("don't go to the kitchen, go to the office" ->
``go_to(office)``). The rules and their measurements: ``docs/language.md``.

Rejected alternatives: a keyword list per tool written by hand (it does not carry over to a
new tool set); IDF-weighted docstring words, the previous design (an incidental docstring word
or an argument value selected tools: "fly forward" changed altitude, a joke request landed).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from edgevox.agents.resolver_args import (
    UNKNOWN_SIGN,
    WHICH_WAY,
    Extraction,
    ToolIndex,
    anyof_type,
    enum_values,
    extract_from,
    index_tool,
    is_string,
    is_switch,
    named_numbers,
)
from edgevox.agents.tools import Tool
from edgevox.language.clauses import QUOTED, deferral
from edgevox.language.frames import NUMERIC, ToolFrame, name_words
from edgevox.language.intent import Intent, analyze
from edgevox.language.lexicon import base_form, known, nominalizations, switch_polarity
from edgevox.language.matching import EXACT, LIGHT, NEAR, OTHER_OBJECT, SYNONYM, Match, match
from edgevox.language.nlp import parse
from edgevox.language.numbers import find_numbers
from edgevox.language.paths import destination
from edgevox.language.phrasal import PREPOSITIONS
from edgevox.language.requests import RequestFrame, is_direction, pronoun_object, read_request, strip_conjunction
from edgevox.language.state_question import asks_advice, asks_robot_state
from edgevox.language.terms import DIRECTION_STEMS, stem, tokenize
from edgevox.language.units import unit
from edgevox.language.words import LIGHT_VERBS, WH_WORDS, lemmas, words


def is_statement(text: str) -> bool:
    """True when ``text`` is a statement, not a request (see ``intent.py``)."""
    return analyze(text).kind == "statement"


MAX_SPOKEN_OPTIONS = 6
"""A clarifying question lists an enum's values when it has at most this many."""


WAY_QUESTION = "Which way should I"
"""How a question about the direction of a motion opens (its answer must say a way)."""


@dataclass
class Proposal:
    """What the resolver proposes for one utterance."""

    call: tuple[str, dict[str, Any]] | None
    """``(tool name, arguments)`` or ``None`` for "answer in words"."""
    sure: bool
    candidates: list[str] = field(default_factory=list)
    """Plausible tools, best first (for a constrained LLM choice when not sure)."""
    found: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Arguments found per candidate tool."""
    missing: dict[str, list[str]] = field(default_factory=dict)
    """Required arguments not found per candidate tool."""
    scores: dict[str, float] = field(default_factory=dict)
    reason: str = ""
    clarify: str | None = None
    """A short question to ask instead of acting; ``call`` is then the proposed call it would
    complete (``missing`` names what the answer must supply)."""
    intent: Intent | None = None
    problems: dict[str, dict[str, str]] = field(default_factory=dict)
    """Per candidate tool: argument -> why its value is not usable (unit, range, ambiguous)."""
    sure_tools: set[str] = field(default_factory=set)
    """Tools the request names surely enough to act on (by their verb, or a verb and object):
    an LLM choice among the candidates acts only on one of these, else it is confirmed."""
    open_question: bool = False
    """``clarify`` asks what the request left out, with no call to complete ("turn" alone:
    "What should I do: rotate or change the altitude?"); the answer completes the words."""
    plan: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    """Several calls to run in order (a compound request whose every part is sure); ``call``
    is then the first."""


SEQUENCE_MARKERS = frozenset(("then", "next", "afterwards", "after"))
ANAPHORA = frozenset(("it", "its", "there", "them", "that one"))
"""Pronouns that stand for something named before ("take a photo of *it*", "go *there*")."""
"""A part that opens with one of these is a next step, not an afterthought."""

VALUES_FIT = "no word named a tool; the directions and units said fit only this one"

ARGUMENTS_ONLY = "only argument values matched"
"""``Proposal.reason`` when no word of the request names a tool, only argument values did
("make it brighter in the bedroom": the room): a tool chosen then is a guess, to be confirmed."""


class SchemaResolver:
    """Proposes tool calls from the tools' frames alone (no model; a few ms per request).

    Thread-safe after construction (read-only state).
    """

    def __init__(self, tools: Iterable[Tool], *, min_trigger: float = 1.0, margin: float = 0.5) -> None:
        self.min_trigger = min_trigger
        self.margin = margin
        self._index = [index_tool(t) for t in tools]
        self._sign_cues = frozenset(c for e in self._index for c in e.frame.sign_cues)
        """Every word a tool's sign convention names as a direction (see :meth:`_cued`)."""
        self._owned: dict[str, set[str]] = {}
        """A noun of a tool's name -> the tools it names (``set_side_rails``: rail, side)."""
        for e in self._index:
            for o in e.frame.own_objects:
                self._owned.setdefault(o, set()).add(e.tool.name)

    # -- index -----------------------------------------------------------------------------

    @property
    def tools(self) -> list[Tool]:
        return [e.tool for e in self._index]

    def frames(self) -> list[ToolFrame]:
        return [e.frame for e in self._index]

    # -- proposal --------------------------------------------------------------------------

    def propose(self, text: str) -> Proposal:
        """What to do about ``text``: only a request acts (see ``intent.py``); a question may
        call a query tool; anything else is answered in words. Several command clauses
        ("turn left and then move forward one metre") are one plan, run in order, only when
        every part is sure."""
        intent = analyze(text)
        if intent.kind in ("negated", "report", "hypothetical", "statement"):
            return Proposal(None, True, reason=f"{intent.kind}: {intent.reason}", intent=intent)
        if intent.kind == "question" and not intent.may_query:
            return Proposal(None, True, reason=f"a question: {intent.reason}", intent=intent)
        if intent.kind == "question" and asks_advice(intent.clause):
            # "what's a good salt rate for black ice?": advice, not what a report reads
            return Proposal(None, True, reason="a question asking for advice: answered in words", intent=intent)
        parts = (
            [c.text for c in intent.clauses if c.kind == "command" or _hedge(c) or c.requested]
            if intent.kind == "command"
            else []
        )
        if len(parts) > 1:
            questions = {strip_conjunction(c.text) for c in intent.clauses if c.kind == "question"}
            proposal = self._plan(parts, questions)
        else:
            proposal = self._propose(intent.clause, query_only=intent.kind == "question")
        proposal.intent = intent
        if intent.elliptical and proposal.call is None and not proposal.sure:
            # "the green block": no verb and no tool word, so nothing asks for an action.
            return Proposal(None, True, reason="names only argument values, asks for nothing", intent=intent)
        if intent.kind == "question" and proposal.call is None and proposal.sure:
            report = self._one_report()
            if report is not None and asks_robot_state(intent.clause):
                # "what are you up to right now?": the robot's state comes from its record, never
                # from what a language model makes up; one report that takes nothing holds it
                return Proposal((report, {}), True, [report], reason="a question about its own state", intent=intent)
            proposal.reason = f"a question ({intent.reason}) for no query tool: answered in words"
        if intent.confirm and proposal.call is not None and proposal.clarify is None:
            name, args = proposal.call
            entry = self._entry(name)
            timed = [p for p in args if (u := entry.units.get(p)) is not None and u.dimension == "time"]
            said = words(intent.clause)
            times_said = sum(1 for w in said if (u := unit(w)) is not None and u.dimension == "time")
            # "start a 20 minute cycle in an hour": a time besides the tool's is a delay
            takes_time = bool(timed) and times_said <= len(timed)
            if intent.confirm == "duration" and takes_time:
                # "set a timer in five minutes", "start a cycle in twenty minutes": the time said
                # with "in" is the tool's own time or a delay before it: the call is offered
                proposal.clarify = f"Should I {self.describe(name, args)} now?"
                proposal.plan = []
            else:
                if takes_time and deferral(said) == "duration":
                    # "start the cycle in an hour": the hour is when, not how long; it is no value
                    args = {p: v for p, v in args.items() if p not in timed}
                    proposal.call = (name, args)
                    proposal.missing[name] = [*proposal.missing.get(name, []), *timed]
                proposal.clarify = self.confirm_question(intent.confirm, name, args)
                proposal.plan = []
        return proposal

    def _one_report(self) -> str | None:
        """The tool set's one reading tool that takes no argument (``get_status``), if it has
        exactly one."""
        readers = [e.tool.name for e in self._index if e.query and not e.tool.required]
        return readers[0] if len(readers) == 1 else None

    def _plan(self, parts: list[str], questions: set[str] | frozenset[str] = frozenset()) -> Proposal:
        """One proposal for several command clauses, in order.

        Parts that name the same tool one after the other are one call with the values of both
        ("take off and hover at three metres" is ``take_off(height=3)``); a part said twice
        ("stop, stop!") is said once. When every part is a sure call, the plan runs; when some
        part names a tool but is unsure of it, the whole plan is asked about ("Did you mean fly
        back 2 meters, then land?": a yes runs it all); a part that lacks a value is asked
        about, saying what waits; a part that names no tool is said to be impossible, and the
        parts that are clear are offered without it. Nothing runs until every part is clear. A
        part that asks to be told something (``questions``: "check the moisture in bed twelve,
        then water it") is read as a question is, so a reading tool answers it."""
        parts = self._serial_verbs(self._attach_afterthoughts(parts))
        if len(parts) == 1:
            return self._propose(parts[0], query_only=strip_conjunction(parts[0]) in questions)
        proposals = self._merge_same_tool(
            [self._propose(part, query_only=strip_conjunction(part) in questions) for part in parts], parts
        )
        for i, (p, text) in enumerate(proposals):
            done = [q.call for q, _ in proposals[:i] if q.call is not None]
            self._refer_back(p, text, done)
            if p.call is None:
                # the parts it can do, before and after it, are offered in order when each is clear
                after = [q for q, _ in proposals[i + 1 :]]
                if after and all(q.call is not None and q.sure and q.clarify is None and not q.plan for q in after):
                    done = done + [q.call for q in after if q.call is not None]
                before = " and ".join(self.describe(*c) for c in done)
                question = f"I can't do '{strip_conjunction(text).strip(' .!?,')}'." + (
                    f" Should I just {before}?" if before else ""
                )
                partial = Proposal(
                    done[0] if done else None, True, reason=f"part {i + 1} names no tool", clarify=question
                )
                partial.plan = list(done)  # a yes runs the parts before it, in order
                return partial
            if p.clarify is None and p.call is not None and p.missing.get(p.call[0]):
                # a part that lacks a value, even a free string ("count the items"), is asked:
                # a yes to the whole plan must never run a call without it
                asked = self._value_question(self._entry(p.call[0]), p.missing, p.problems)
                if asked is not None:
                    p.reason, p.clarify = asked
            if p.clarify is not None and not p.clarify.startswith("Did you mean"):
                if done:  # a value is missing or unusable: ask it, saying what waits
                    waiting = " and ".join(self.describe(*c) for c in done)
                    p.clarify = f"Before I {waiting}: {p.clarify[0].lower()}{p.clarify[1:]}"
                return p
        calls = [q.call for q, _ in proposals if q.call is not None]
        first = proposals[0][0]
        first.plan = calls
        first.call = calls[0]
        if all(q.sure and q.clarify is None for q, _ in proposals):
            first.reason = f"a plan of {len(calls)} calls" if len(calls) > 1 else first.reason
            first.clarify = None
            return first
        first.sure = True
        first.reason = "a plan with a part unsure of its tool"
        first.clarify = "Did you mean " + ", then ".join(self.describe(*c) for c in calls) + "?"
        return first

    def _refer_back(self, p: Proposal, text: str, done: list[tuple[str, dict[str, Any]]]) -> None:
        """A pronoun in a later step stands for what an earlier step named: "move to bed 1 and
        then take a photo of *it*" photographs bed 1. A value the step lacks is taken from the
        latest earlier call with a parameter of the same name, only when the step says such a
        pronoun; its question about that value goes."""
        if p.call is None or not done or not (ANAPHORA & {w for w, _, _ in tokenize(text)}):
            return
        name, args = p.call
        lacking = p.missing.get(name, [])
        taken = {
            q: prev[q] for q in lacking for _, prev in reversed(done) if q in prev
        }  # the latest earlier value wins
        if not taken:
            return
        p.call = (name, {**args, **taken})
        p.missing = {**p.missing, name: [q for q in lacking if q not in taken]}
        if p.clarify is not None and not p.clarify.startswith("Did you mean") and not p.problems.get(name):
            asked = self._value_question(self._entry(name), p.missing, p.problems)
            p.clarify = asked[1] if asked is not None else None
            if asked is not None:
                p.reason = asked[0]

    def _serial_verbs(self, parts: list[str]) -> list[str]:
        """ "go and mow the back lawn", "go and charge yourself": "go" or "come" alone before
        another verb is one request with it (English's serial verbs): the second verb says
        what to do, alone when it names a tool surely, else with "go" ("go charge")."""
        out: list[str] = []
        for text in parts:
            if out and out[-1].lower().strip(" ,.!") in ("go", "come"):
                alone = self._propose(text)
                sure = alone.call is not None and alone.sure and alone.clarify is None
                out[-1] = text if sure else f"{out[-1].strip(' ,.!')} {text}"
            else:
                out.append(text)
        return out

    def _attach_afterthoughts(self, parts: list[str]) -> list[str]:
        """A part with no verb of its own continues the one before ("drive forward two metres,
        slowly", "turn left, ninety degrees"): an afterthought, not a request; after "then" it
        is a next step with the same verb ("go to the lab first, then on to reception")."""
        out: list[str] = []
        lead = ""
        if len(parts) > 1 and _lead_in(strip_conjunction(parts[0])) and not self._acts_alone(parts[0]):
            # "up on your feet, stand up", "the kitchen, go there": a verbless lead-in says
            # what the request after it does; it is read with it
            lead, parts = strip_conjunction(parts[0]), parts[1:]
        for raw in parts:
            text = strip_conjunction(raw)
            if lead:
                text, lead = f"{text} {lead}", ""
            opening = [w.lower().strip(",") for w in raw.split()[:2]]
            if out and not read_request(text).verbs:
                if any(w in SEQUENCE_MARKERS for w in opening):
                    out.append(f"{out[-1].split(' ', 1)[0]} {text}")  # "go on to reception"
                else:
                    out[-1] = f"{out[-1]} {text}"
            else:
                out.append(text)
        return out

    def _value_in_free_words(
        self,
        best: str,
        ranked: list[str],
        found: dict[str, dict[str, Any]],
        missing: dict[str, list[str]],
        problems: dict[str, dict[str, str]],
        text: str,
    ) -> str | None:
        """The one other tool, complete, whose choice value said lies inside the free string
        the best tool took."""
        if QUOTED.search(text):
            return None  # a quoted string is the user's own words
        tool = self._entry(best).tool
        free = [str(v).lower() for p, v in found[best].items() if is_string(tool, p)]
        if not free:
            return None
        rivals = []
        for n in ranked:
            if n == best or missing[n] or problems[n]:
                continue
            entry = self._entry(n)
            chosen = [
                str(v).lower().replace("_", " ")
                for p, v in found[n].items()
                if enum_values(entry.tool.parameters["properties"][p])
            ]
            if any(c and c in f for c in chosen for f in free):
                rivals.append(n)
        return rivals[0] if len(rivals) == 1 else None

    def _other_object_said(self, best: str, request: RequestFrame, given: dict[str, Any]) -> bool:
        """A noun of the request, not one of ``best``'s values, is an object of another tool
        and none of ``best``'s."""
        own_values = {stem(w) for v in given.values() if isinstance(v, str) for w, _, _ in tokenize(v)}
        frame = self._entry(best).frame
        for noun in request.nouns:
            if stem(noun) in own_values:
                continue
            alone = replace(request, nouns=frozenset([noun]), verbs=())
            if match(alone, frame).objects > 0:
                continue
            if any(match(alone, e.frame).objects >= OTHER_OBJECT for e in self._index if e.tool.name != best):
                return True
        return False

    def _acts_alone(self, part: str) -> bool:
        """The part is a request of its own: it names a tool surely, or says an amount ("back
        up two metres"), so it is no lead-in to the next part."""
        alone = self._propose(part)
        return (alone.call is not None and alone.clarify is None) or bool(find_numbers(words(part)))

    def _merge_same_tool(self, proposals: list[Proposal], parts: list[str]) -> list[tuple[Proposal, str]]:
        out: list[tuple[Proposal, str]] = []
        for p, text in zip(proposals, parts, strict=True):
            if out and p.call is not None and out[-1][0].call is not None and out[-1][0].call[0] == p.call[0]:
                prev, prev_text = out[-1]
                if p.call == prev.call and p.clarify is None:
                    continue  # said again ("stop, stop!")
                merged = self._propose(f"{prev_text} {text}")
                before = prev.call[1] if prev.call is not None else {}
                clash = any(k in before and before[k] != v for k, v in p.call[1].items())  # two lab/reception
                if merged.call is not None and merged.call[0] == p.call[0] and not clash:
                    out[-1] = (merged, f"{prev_text} {text}")
                    continue
            out.append((p, text))
        return out

    def confirm_question(self, why: str, name: str, arguments: dict[str, Any]) -> str:
        """Ask before acting on a likely but unsure request (see ``Intent.confirm``)."""
        what = self.describe(name, arguments)
        if why in ("later", "duration"):
            return f"I can only do things now, not later. Should I {what} now?"
        return f"Should I {what}?"

    def _propose(self, text: str, *, query_only: bool = False) -> Proposal:
        tokens = tokenize(text)
        request = read_request(text)
        # "go back to the dock": a return; "back *up*": the verb's particle; "right now": no
        # direction (see RequestFrame.directions)
        stems = [stem(w) for w, _, _ in tokens if not is_direction(w) or w in request.directions]
        scores: dict[str, float] = {}
        matches: dict[str, Match] = {}
        evidence: dict[str, float] = {}
        found: dict[str, dict[str, Any]] = {}
        in_unit: dict[str, int] = {}
        described: dict[str, bool] = {}
        value_hits: dict[str, int] = {}
        missing: dict[str, list[str]] = {}
        problems: dict[str, dict[str, str]] = {}
        # A direction said with a number rules out tools that cannot go that way, when some tool can.
        said_words = [w for w, _, _ in tokens]
        said_numbers = find_numbers(said_words)
        in_names = named_numbers(said_words, self._index)  # "dock 2": a name, no amount
        numbers_said = len(said_numbers) > len(in_names)
        cued = self._cued(request)
        quoted = QUOTED.search(text) is not None  # 'put "back in five" on the screen': a text it shows
        takers = (
            {e.tool.name for e in self._index if _takes_directions(e.frame, request, cued)} if numbers_said else set()
        )
        kinds: dict[str, bool] = {}
        said_verbs = {v.verb for v in request.verbs}  # "crawl forward": "crawl" no noun here
        for entry in self._index:
            if query_only and not entry.query:
                continue
            name = entry.tool.name
            ex = extract_from(entry, text, tokens, in_names)
            m = match(request, entry.frame)
            light_object = (  # "give me the inventory report": given to the speaker, a report is read out
                all(v.verb in LIGHT_VERBS and not v.particle for v in request.verbs)
                and bool({"me", "us"} & set(request.words))
                and m.objects >= 1.0
            )
            if (
                entry.query
                and not query_only
                and request.verbs
                and not (m.own_verb and (m.verb_exact or m.verb >= SYNONYM))
                and not light_object  # "give me the inventory report": a light verb defers to its object
                and not (quoted and any(is_string(entry.tool, p) for p in entry.tool.required))
            ):
                continue  # a command asks for an action: a reading tool only when its own verb names it ("fill jar two" is no "list which jars are filled")
            if entry.query and not query_only and request.verbs and request.nouns and m.objects == 0:
                continue  # "tell me a joke": its verb, but not what it reports
            if takers and name not in takers:
                continue  # "swing it over to the right, twenty degrees": not a tool that cannot go right
            # Argument evidence ranks tools a verb or an object named; it never selects one.
            ev = 1.0 * ex.hits + 0.5 * sum(1 for r in entry.signs.values() if r.sign(stems) in (-1, 1))
            ev += 0.25 * sum(1 for pn in ex.found if (pf := entry.frame.param(pn)) is not None and pf.kind in NUMERIC)
            ev += 0.5 * ex.unit_hits  # "five hundred degrees": its unit, even out of its bounds
            ev += 0.5 * ex.shared_hits  # "the aisle": a word of its values, which one to ask
            # "put it in a chute" for sort(chute): the noun names the kind of value it needs
            kinds[name] = any(
                not ex.found.get(pn) and name_words(pn)[-1] in request.nouns for pn in entry.tool.required
            )
            ev = min(ev, 1.0)
            matches[name], evidence[name] = m, ev
            # A tool whose required values the request gives fits it better than one it leaves
            # asking (never a tool with none: "land" does not win because "fly" lacks a distance).
            complete = bool(entry.tool.required) and not ex.missing and not ex.problems
            scores[name] = m.trigger + ev + (0.5 if complete else 0.0)
            if (
                m.objects == 0
                and not (ex.found or ex.problems or ex.unit_hits)
                and any(name not in owners for n in request.nouns - said_verbs if (owners := self._owned.get(n)))
            ):
                # "move the side rails": the thing said is another tool's own (set_side_rails),
                # not this one's, and nothing said is its value or in its unit: its verb ("move" of
                # move_to_preset) says nothing of what is to be done to that thing
                scores[name] -= m.verb
            found[name], missing[name], problems[name] = ex.found, ex.missing, ex.problems
            in_unit[name] = ex.unit_hits
            described[name] = bool(ex.described & set(ex.found))
            value_hits[name] = ex.hits

        kind_named = {n for n in scores if kinds[n]} if not any(found.values()) else set()
        for n in kind_named:  # a value said ("the laundry room") is stronger than a kind named
            scores[n] += 1.0
            evidence[n] = 1.0

        acts_as_nouns = (
            {noun for w in request.words for v in lemmas(w).get("VERB", ()) for noun in nominalizations(v)}
            if query_only
            else set()
        )

        def is_named(n: str) -> bool:
            # A verb or an object names the tool; a verb only near in meaning ("turn" for
            # ``rotate``) names it when the tool also understands the request's values.
            m = matches[n]
            if query_only:  # a question to a tool that only reads: harmless, a hint is enough
                # "is tracking on?", "is anything jammed?": the act asked about is a topic it
                # reports as a noun ("whether tracking is on", "jam alarms")
                return m.trigger >= OTHER_OBJECT or bool(self._entry(n).frame.objects & acts_as_nouns)
            if m.trigger >= self.min_trigger or (m.verb >= NEAR and evidence[n] >= 0.5):
                return True
            if n in kind_named and request.has_verb:
                return True  # "put it in chute": what it needs named, which one is asked
            return not request.has_verb and m.objects >= OTHER_OBJECT and evidence[n] > 0  # "thermostat to 19.5"

        ranked = sorted(scores, key=lambda n: (is_named(n), scores[n]), reverse=True)

        def proposal(call: Any, sure: bool, candidates: list[str], reason: str, clarify: str | None = None) -> Proposal:
            p = Proposal(call, sure, candidates, found, missing, scores, reason, clarify, None, problems)
            p.sure_tools = {
                n
                for n in candidates
                if self._sure_of_tool(
                    matches[n], self._entry(n).frame, request, query_only, self._names_value(n, found)
                )
            }
            return p

        named = [n for n in ranked if is_named(n)]
        if not named:
            arg_only = [n for n in ranked if evidence[n] > 0]
            if not arg_only:
                # "snap a photo": a verb no tool has, and the object of exactly one tool's
                # docstring: that tool is likely meant, so it is asked about, never run.
                objects_only = [n for n in ranked if matches[n].objects >= OTHER_OBJECT and matches[n].verb == 0]
                if len(objects_only) == 1 and request.has_verb and not query_only:
                    only = objects_only[0]
                    question = f"Did you mean {self.describe(only, found[only])}?"
                    return proposal((only, found[only]), True, [only], "only its object was said", question)
                if request.has_verb and not request.nouns and not query_only and (pronoun_verb := pronoun_object(text)):
                    # "turn it up a bit" names nothing a tool has: what "it" is was never said here
                    what = proposal(None, True, [], "its object is a pronoun", f"What should I {pronoun_verb}?")
                    what.open_question = True
                    return what
                if request.has_verb and not query_only and (place := destination(text)):
                    # "take us to the lighthouse": a place none of the going tools' choices names
                    goers = self._goers(ranked, matches)
                    if goers:
                        entry, pname = goers[0]
                        which = f"I can't go to the {place}. {self.question(entry, pname)}"
                        return proposal(
                            (entry.tool.name, {}), True, [entry.tool.name], "a place no choice names", which
                        )
                return self._bare_verb(request, matches) or proposal(
                    None, True, [], "no tool is named by the request's verb or objects"
                )
            fit = self._only_fit(arg_only, request, in_unit, value_hits, by_unit=True)  # only asked
            if fit is None:
                return proposal(None, False, arg_only[:3], ARGUMENTS_ONLY)
            # "slide over to the right three metres": an unknown verb of motion, and values only
            # one tool takes. Ask: the verb did not name it.
            entry, call = self._entry(fit), (fit, found[fit])
            asked = self._value_question(entry, missing, problems)
            if asked is not None:
                return proposal(call, True, [fit], *asked)
            return proposal(call, True, [fit], VALUES_FIT, f"Did you mean {self.describe(fit, found[fit])}?")
        taker = self._measure_taker(named[0], ranked, matches, in_unit, tokens)
        chosen_by_measure, object_decides = taker is not None, False
        if taker is None:
            whole = {n: self._choice_said_whole(n, found[n], tokens) for n in named[:2]}
            named, object_decides = self._object_decides(named, matches, scores, in_unit, whole)
        best = taker or named[0]
        m = matches[best]
        entry = self._entry(best)
        frame = entry.frame
        if m.verb < EXACT and not QUOTED.search(text):
            # Free words are the value ("say hello", "put oat milk on the list"); an indefinite
            # phrase after a verb that is not the tool's own ("tell me *a joke*") describes a
            # value to invent, it does not say one.
            for p in [p for p in found[best] if is_string(entry.tool, p)]:
                if _indefinite_before(text, str(found[best][p])):
                    del found[best][p]
                    if p in entry.tool.required:
                        missing[best].append(p)
        candidates = [best] + [n for n in named[1:] if scores[n] > scores[best] - 2 * self.margin][:2]
        call = (best, found[best])
        reason = m.how or "named"
        rival = next((n for n in named if n != best), None)
        if (
            rival is not None
            and scores[best] - scores[rival] < self.margin
            and not object_decides
            and not chosen_by_measure
        ):
            return proposal(call, False, candidates, f"close second: {rival} ({reason})")
        rival = self._value_in_free_words(best, ranked, found, missing, problems, text)
        if rival is not None:
            # "show the welcome screen": free words for show_message, or the "welcome" value of
            # set_display? A value a tool names is likelier meant, but it is asked, not run.
            question = f"Did you mean {self.describe(rival, found[rival])}?"
            return proposal((rival, found[rival]), True, [rival, best], "a value inside free words", question)
        asked = self._value_question(entry, missing, problems, strings_too=False)
        unit_takers = [n for n in ranked if n != best and in_unit[n] > 0 and not query_only]
        if any(why.startswith("said in ") for why in problems[best].values()) and len(unit_takers) == 1:
            # "move 30 centimetres": the verb's tool takes a bed number, and one other tool takes
            # centimetres: that tool was likely meant. Asked (its own question), never run.
            other = unit_takers[0]
            own_question = self._value_question(self._entry(other), missing, problems)
            if own_question is not None:
                return proposal((other, found[other]), True, [other, best], *own_question)
            question = f"Did you mean {self.describe(other, found[other])}?"
            return proposal((other, found[other]), True, [other, best], "a unit only another tool takes", question)
        if any(why.startswith("said in ") for why in problems[best].values()) and 1 < len(unit_takers) <= 3:
            # "move it two degrees" when the verb's tool counts steps and two tools take degrees:
            # which of them is asked, and the answer completes the request ("up")
            names = [spoken_name(n) for n in unit_takers]
            asked_which = proposal(None, True, unit_takers, "a unit several other tools take")
            asked_which.clarify = f"What should I do: {', '.join(names[:-1])} or {names[-1]}?"
            asked_which.open_question = True
            return asked_which
        takes_it: list[str] = []  # another tool the value said was likely meant for: asked, not run
        if asked is not None and not problems[best]:
            # "drive over to aisle B": the verb's tool lacks a value, and the place said is a value
            # of another tool that needs nothing else
            given = [
                n
                for n in ranked
                if n != best
                and value_hits[n] > 0
                and self._entry(n).tool.required
                and not missing[n]
                and not problems[n]
            ]
            takes_it = given if len(given) == 1 else []
        elif not entry.tool.parameters.get("properties") and not query_only:
            # "go back to the front desk": a return takes no place, and the place said is, whole,
            # a choice of another tool (the best ranked of them: "walk to" over "guide the visitor")
            takes_it = [
                n
                for n in ranked
                if n != best and not missing[n] and not problems[n] and self._choice_said_whole(n, found[n], tokens)
            ]
        if takes_it:
            other = takes_it[0]
            question = f"Did you mean {self.describe(other, found[other])}?"
            return proposal((other, found[other]), True, [other, best], "a value only another tool takes", question)
        if asked is not None:
            return proposal(call, True, candidates, *asked)
        if missing[best]:
            return proposal(call, False, candidates, f"missing {missing[best]}")
        # A verb near the tool's ("turn" for ``rotate``) with a direction and a number in a unit
        # that only this tool takes ("turn left ninety degrees"), or one of its choices said
        # whole that only it takes ("head to the kitchen": ``go_to_place``), names it as surely
        # as its verb.
        values_fit = (
            m.verb >= NEAR
            and (in_unit[best] > 0 or self._choice_said_whole(best, found[best], tokens))
            and self._only_fit(list(matches), request, in_unit, value_hits) == best
        )
        # "shut down every thruster": a verb of this tool, but an object only another tool has
        elsewhere = m.objects == 0 and any(matches[n].objects >= OTHER_OBJECT * 0.75 for n in matches if n != best)
        if elsewhere:  # ... unless that object is a value this tool was given ("pour ... into the *shaker*")
            own_values = {stem(w) for v in found[best].values() if isinstance(v, str) for w, _, _ in tokenize(v)}
            rest = replace(request, nouns=frozenset(n for n in request.nouns if stem(n) not in own_values))
            elsewhere = any(
                match(rest, e.frame).objects >= OTHER_OBJECT * 0.75 for e in self._index if e.tool.name != best
            )
        if not elsewhere and m.verb < SYNONYM and not m.verb_exact:
            # "snap a picture of bed eleven": a verb only near the tool's, and beside its object
            # another tool's ("picture" of take_photo): which was meant? asked
            elsewhere = self._other_object_said(best, request, found[best])
        # "turn the sonde on at thirty-three k": a number said that the call does not take would
        # be lost; the call is asked about, never run without it
        # an article is no amount said ("start *a* cycle": pint's cycle is a unit, one of it)
        spans = [n for n in said_numbers if said_words[n.start : n.end] not in (["a"], ["an"])]
        amounts = len(spans) - len(in_names)
        taken = sum(
            1
            for v in found[best].values()
            if (isinstance(v, (int, float)) and not isinstance(v, bool)) or any(c.isdigit() for c in str(v))
        )
        number_left_out = not quoted and not entry.query and amounts > taken
        # "turn it off" with lights and a laser: "it" was named before, or not at all; the verb
        # alone picks one of the tools it fits
        pronoun_guess = (
            not request.nouns
            and not query_only
            and pronoun_object(text) is not None
            and any(n != best and matches[n].verb >= NEAR for n in named)
        )
        # "go over to my desk": a value named only by the docstring's words for it is confirmed
        if (
            elsewhere
            or pronoun_guess
            or number_left_out
            or described[best]
            or (
                not values_fit and not self._sure_of_tool(m, frame, request, query_only, self._names_value(best, found))
            )
        ):
            question = f"Did you mean {self.describe(best, found[best])}?"
            return proposal(call, True, candidates, f"unsure of the tool ({reason})", question)
        return proposal(call, True, candidates, reason)

    def _measure_taker(
        self,
        best: str,
        ranked: list[str],
        matches: dict[str, Match],
        in_unit: dict[str, int],
        tokens: list[tuple[str, int, int]],
    ) -> str | None:
        """ "come up 5 metres", "dim the lights to five percent": a tool that takes no number
        would lose the measure said; the one tool the verb or the object is related to that
        takes it in its unit (and reads its sign from the words said, a particle too: the "up"
        of "come up", when it is signed) is meant. None when ``best`` takes a number, or no
        single tool takes the measure."""
        if any(p.kind in NUMERIC for p in self._entry(best).frame.params) or not any(in_unit.values()):
            return None
        said = [stem(w) for w, _, _ in tokens]
        takers = [
            n
            for n in ranked
            if (matches[n].verb > 0 or matches[n].objects > 0)
            and in_unit[n] > 0
            and all(r.sign(said) in (-1, 1) for r in self._entry(n).signs.values())
        ]
        return takers[0] if len(takers) == 1 and takers[0] != best else None

    def _object_decides(
        self,
        named: list[str],
        matches: dict[str, Match],
        scores: dict[str, float],
        in_unit: dict[str, int],
        whole: dict[str, bool],
    ) -> tuple[list[str], bool]:
        """ "turn the laser off": two close tools that both fit the verb; the object said is one
        tool's, and none of the other's objects is said: the object decides (that tool first),
        unless the other takes a measure said that it does not ("move the arm ten centimetres"
        is no "park the arm"). So does one of a tool's choices said whole that the other has no
        place for ("make your way to the *office*": ``go_to``, not ``move``)."""
        if len(named) < 2 or scores[named[0]] - scores[named[1]] >= self.margin:
            return named, False
        first, second = named[0], named[1]
        for winner, loser in ((second, first), (first, second)):
            by_object = (
                matches[loser].objects == 0 and matches[winner].objects >= 1.0 and self._entry(loser).frame.objects
            )
            by_choice = whole[winner] and not whole[loser] and in_unit[loser] == 0
            if (by_object or by_choice) and not (in_unit[loser] > 0 and in_unit[winner] == 0):
                return ([winner, loser, *named[2:]] if winner == second else named), True
        return named, False

    def _choice_said_whole(self, name: str, given: dict[str, Any], tokens: list[tuple[str, int, int]]) -> bool:
        """One of the tool's choices given, each of its words said ("the *pharmacy*", "the
        *front desk*"; not "the charging *station*" for "nurses station"; a free text is no
        choice)."""
        said = {stem(w) for w, _, _ in tokens}
        frame = self._entry(name).frame
        for pname, v in given.items():
            param = frame.param(pname)
            if isinstance(v, str) and param is not None and param.values:
                if {stem(w) for w, _, _ in tokenize(v.replace("_", " "))} <= said:
                    return True
        return False

    def _value_question(
        self,
        entry: ToolIndex,
        missing: dict[str, list[str]],
        problems: dict[str, dict[str, str]],
        *,
        strings_too: bool = True,
    ) -> tuple[str, str] | None:
        """(reason, question) for the first value of ``entry``'s tool that was said unusably (the
        answer replaces it, so it is added to ``missing``) or not said; None when all are there.
        ``strings_too=False``: a missing free string is left to the LLM to cut from the words."""
        name = entry.tool.name
        for pname, why in problems[name].items():
            if pname not in missing[name]:
                missing[name] = [*missing[name], pname]
            return f"{pname}: {why}", self.question(entry, pname, why)
        unfillable = [p for p in missing[name] if strings_too or not is_string(entry.tool, p)]
        if unfillable:
            return f"missing {unfillable}", self.question(entry, unfillable[0])
        return None

    def _goers(self, ranked: list[str], matches: dict[str, Match]) -> list[tuple[ToolIndex, str]]:
        """Tools that go to one of their choices of place, named by the request's verb (its
        own, a light one such as "go", or a verb near it), best first, each with that choice's
        parameter."""
        out = []
        for n in ranked:
            entry = self._entry(n)
            choice = next((p for p in entry.tool.required if (f := entry.frame.param(p)) and f.values), None)
            if choice is not None and not entry.query and matches[n].verb >= LIGHT:
                out.append((entry, choice))
        return out

    def _bare_verb(self, request: RequestFrame, matches: dict[str, Match]) -> Proposal | None:
        """A command that is a verb alone ("turn", "go") asks for an action whose details are
        missing: ask which of the tools its verb is near, never answer in words or guess."""
        if len(request.verbs) != 1 or request.nouns or request.directions or len(request.sequence) > 3:
            return None
        if any(w.isdigit() for w in request.words) or find_numbers(list(request.words)):
            return None
        near = sorted((n for n, m in matches.items() if m.verb >= NEAR), key=lambda n: -matches[n].verb)
        near = [n for n in near if not self._entry(n).query and not _other_particle(request, self._entry(n).frame)][:3]
        if not near:
            return None
        if len(near) == 1 and (required := self._entry(near[0]).tool.required):
            # "go over there" and one tool goes: ask its value ("Which destination: ...?")
            entry = self._entry(near[0])
            return Proposal(
                (near[0], {}), True, near, missing={near[0]: list(required)}, reason="a verb alone",
                clarify=self.question(entry, required[0]),
            )  # fmt: skip
        names = [spoken_name(n) for n in near]
        options = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
        p = Proposal(None, True, near, reason="a verb alone", clarify=f"What should I do: {options}?")
        p.open_question = True
        return p

    def _cued(self, request: RequestFrame) -> set[str]:
        """Nouns said that are no general direction, which a tool's sign convention names as
        one ("to *starboard*": "Positive turns to starboard")."""
        # a noun of the tool's own ("starboard"), not of general English ("the *lift*", "the *front*")
        return {stem(w) for w in request.nouns if not is_direction(w)} & self._sign_cues - DIRECTION_STEMS

    def _only_fit(
        self,
        names: list[str],
        request: RequestFrame,
        in_unit: dict[str, int],
        value_hits: dict[str, int],
        *,
        by_unit: bool = False,
    ) -> str | None:
        """The one tool that takes every direction the request says, and the unit of a number
        said with one ("nudge it down five degrees": the tilt, not the left/right pan); with no
        direction said, the one tool a value of whose choices is said ("switch to stripes":
        the mowing pattern). None when no tool or several fit."""
        said = {stem(d) for d in request.directions} | self._cued(request)
        if not request.verbs:
            return None
        if said:
            fits = [
                n
                for n in names
                if said <= self._entry(n).frame.directions and (in_unit[n] > 0 or not any(in_unit.values()))
            ]
        else:  # a verb besides the value ("rock, please" says only the value), or its unit when asked ("two metres")
            fits = [
                n
                for n in names
                if (value_hits[n] > 0 or (by_unit and in_unit[n] > 0)) and self._verb_besides_values(n, request)
            ]
        return fits[0] if len(fits) == 1 else None

    def _verb_besides_values(self, name: str, request: RequestFrame) -> bool:
        values = {stem(w) for p in self._entry(name).frame.params for v in p.values for w, _, _ in tokenize(str(v))}
        return any(stem(v.verb) not in values for v in request.verbs)

    def _names_value(self, name: str, found: dict[str, dict[str, Any]]) -> bool:
        """The request names one of the tool's enum or boolean values ("sport mode", "on")."""
        frame = self._entry(name).frame
        return any((pf := frame.param(p)) is not None and pf.kind in ("enum", "boolean") for p in found.get(name, {}))

    @staticmethod
    def _sure_of_tool(m: Match, frame: ToolFrame, request: RequestFrame, query_only: bool, value_named: bool) -> bool:
        """Act without asking? A question to a reading tool needs only a named object or verb;
        an action needs its verb (same or a synonym), or a weaker verb with its object; an
        action with no argument (land, return home) needs its own verb."""
        if query_only:
            return m.trigger >= 1.0
        if frame.drastic:
            return m.verb >= EXACT  # its own verb, said as it is
        if m.verb >= SYNONYM and (m.own_verb or m.objects > 0):
            return True  # its own verb; another verb of its docstring with its object ("stop recording")
        if m.verb_exact and m.verb >= LIGHT and (m.objects >= OTHER_OBJECT or value_named):
            return True  # its light verb as said: "set the volume", "go to the kitchen"
        if m.verb >= LIGHT and m.objects >= OTHER_OBJECT:
            return True  # "put it in slow mode": a verb near the tool's, and its object
        if (
            request.has_verb
            and all(v.verb in LIGHT_VERBS and not v.particle for v in request.verbs)
            and m.objects >= 1.0
        ):
            # "put oat milk on the shopping list": a light verb defers to its object; with a
            # particle it is a phrasal verb with its own meaning ("bring the camera *back*")
            return True
        if m.objects >= 1.0 and _switching(request, frame):
            return True  # "kill the siren": a verb that means switching off, said of the tool's own object
        return not request.has_verb and m.objects >= 1.0  # "lights off in the kitchen"

    def _entry(self, name: str) -> ToolIndex:
        return next(e for e in self._index if e.tool.name == name)

    def extract_arguments(
        self,
        t: Tool,
        text: str,
        *,
        tokens: list[tuple[str, int, int]] | None = None,
        index: ToolIndex | None = None,
    ) -> tuple[dict[str, Any], list[str], int]:
        """Arguments of ``t`` found in ``text``: (found, missing required names, argument-word hits).

        A value that cannot be used (wrong dimension, out of bounds, ambiguous) is missing.
        """
        ex = self.extract(t, text, tokens=tokens, index=index)
        return ex.found, ex.missing, ex.hits

    def extract(
        self,
        t: Tool,
        text: str,
        *,
        tokens: list[tuple[str, int, int]] | None = None,
        index: ToolIndex | None = None,
    ) -> Extraction:
        """Arguments of ``t`` in ``text``, with the reasons some values could not be used."""
        if index is None:
            index = next((e for e in self._index if e.tool.name == t.name), None) or index_tool(t)
        return extract_from(index, text, tokens if tokens is not None else tokenize(text))

    # -- questions -------------------------------------------------------------------------

    def question(self, entry: ToolIndex | str, pname: str, problem: str = "") -> str:
        """A short, speakable question for the value of ``pname`` ("How far should I move, in meters?")."""
        if isinstance(entry, str):
            entry = self._entry(entry)
        t = entry.tool
        prop = t.parameters.get("properties", {}).get(pname, {})
        verb = spoken_name(t.name)
        what = pname.replace("_", " ")
        own = [v.verb for v in entry.frame.verbs if v.own and not v.particle and v.verb in pname.lower().split("_")]
        if own:
            verb = own[0]  # ``tilt_deg`` of ``pan_tilt``: "How many degrees should I tilt?"
        values = enum_values(prop)
        if values:
            if len(values) <= MAX_SPOKEN_OPTIONS:
                shown = [str(v).replace("_", " ") for v in values]  # spoken: "half open"
                if len(shown) == 1:  # one allowed value (e.g. a handoff tool's only target)
                    return f"Which {what}: {shown[0]}?"
                return f"Which {what}: {', '.join(shown[:-1])} or {shown[-1]}?"
            return f"Which {what}?"
        kind = prop.get("type") or anyof_type(prop)
        if problem.startswith(WHICH_WAY):
            return f"{WAY_QUESTION} {verb}: {problem[len(WHICH_WAY) :].strip()}?"
        if kind == "boolean":
            return f"Should I {verb} on or off?"
        if kind in ("number", "integer"):
            unit = entry.units.get(pname)
            uname = unit.spoken if unit else None
            lo, hi = (
                prop.get("minimum", prop.get("exclusiveMinimum")),
                prop.get("maximum", prop.get("exclusiveMaximum")),
            )
            declared = entry.frame.param(pname)  # bounds its docstring gives ("between 0 and 100")
            if declared is not None:
                lo = lo if lo is not None else declared.minimum
                hi = hi if hi is not None else declared.maximum
            last = what.split()[-1] if what.split() else what
            if uname is None and kind == "integer" and base_form(last, "n") != last:
                uname = what  # a count named by a plural noun: "How many laps should I patrol?"
            prefix = ""
            if problem.startswith("out of bounds") and lo is not None and hi is not None:
                prefix = f"I can {verb} from {lo:g} to {hi:g}{' ' + uname if uname else ''}. "
            if problem.startswith(UNKNOWN_SIGN) and lo is not None and hi is not None:
                way = problem[len(UNKNOWN_SIGN) :].strip()
                prefix = f"I don't know if {way} is plus or minus: I can {verb} from {lo:g} to {hi:g}. "
            if unit is not None and unit.dimension == "length":
                return f"{prefix}How far should I {verb}, in {uname}?"
            if uname:
                return f"{prefix}How many {uname} should I {verb}?"
            if kind == "integer":
                return f"{prefix}Which {what}?"  # a numbered thing: "Which shelf?"
            return f"{prefix}What {what} should I use to {verb}?"
        verb = verb.removesuffix(f" the {what}")  # "What message should I show?", not "show the message"
        return f"What {what} should I {verb}?"

    def describe(self, name: str, arguments: dict[str, Any]) -> str:
        """The call as words ("turn right 180 degrees"), for "Did you mean ...?"."""
        entry = self._entry(name)
        parts = [spoken_name(name)]
        for pname, value in arguments.items():
            if isinstance(value, bool):
                parts.append("on" if value else "off")
            elif isinstance(value, (int, float)):
                unit = entry.units.get(pname)
                parts.append(f"{value:g} {unit.spoken}" if unit else f"{value:g}")
            elif str(value) not in parts:  # a value said once ("handler", not "handler handler handler")
                parts.append(str(value))
        return " ".join(parts)


PARTICLES = frozenset("up down to on off in out over back away into onto".split())
INDEFINITE_ARTICLES = frozenset(("a", "an", "some", "any"))


def _lead_in(text: str) -> bool:
    """A phrase with no verb that opens with a preposition, a determiner or an adverb ("up on
    your feet", "the kitchen"): no request of its own ("dance" may be one, so a bare word is not)."""
    toks = [t for t in parse(text) if not t.is_punct]
    return bool(toks) and toks[0].pos_ in ("ADP", "DET", "ADV") and not any(t.pos_ in ("VERB", "AUX") for t in toks)


def _switching(request: RequestFrame, frame: ToolFrame) -> bool:
    """Every verb of the request means switching on or off (``lexicon.switch_polarity``) and the
    tool switches something (a required on/off boolean): "kill the lights" is "switch off"."""
    switches = any(p.kind == "boolean" and p.required and is_switch(p.name, p) for p in frame.params)
    return (
        switches
        and bool(request.verbs)
        and all(
            (v.particle or v.verb not in LIGHT_VERBS) and switch_polarity(v.text) is not None for v in request.verbs
        )
    )


def _indefinite_before(text: str, value: str) -> bool:
    """The value follows an indefinite article ("tell me *a* joke")."""
    at = text.lower().find(value.lower())
    before = text[:at].lower().split() if at > 0 else []
    return bool(before) and before[-1] in INDEFINITE_ARTICLES


def _other_particle(request: RequestFrame, frame: ToolFrame) -> bool:
    """The request's phrasal verb is the tool's verb with another particle ("turn *around*"
    for a tool that turns things on or off): another verb."""
    return any(
        rp.particle and tp.particle and rp.verb == tp.verb and rp.particle != tp.particle
        for rp in request.verbs
        for tp in frame.verbs
    )


def _takes_directions(frame: ToolFrame, request: RequestFrame, cued: set[str]) -> bool:
    """Every direction the request says is one the tool understands (its parameters or its
    docstring: ``ToolFrame.understood_directions``), and so is every word said that some tool's
    sign convention names as a direction (``cued``: "starboard"). "Up" and "down" also mean more
    and less of any scale ("crank the volume up"): they rule no tool out."""
    said = {stem(d) for d in request.directions if d not in ("up", "down")} | cued
    return said <= frame.understood_directions  # which holds the sign conventions' words


def _hedge(clause: Any) -> bool:
    """A verbless question after a command hedges its value ("turn right a bit, like twenty
    degrees?"): part of the command, not a question of its own (a wh-question is one)."""
    if clause.kind != "question":
        return False
    opening = clause.text.lower().split()[:1]
    return clause.elliptical or (not read_request(clause.text).verbs and not (opening and opening[0] in WH_WORDS))


def spoken_name(tool_name: str) -> str:
    """A tool name as a verb phrase: ``set_timer`` -> "set the timer", ``go_to`` -> "go to",
    ``move_along_row`` -> "move along the row"."""
    parts = [p for p in tool_name.lower().split("_") if p]
    if len(parts) >= 3 and parts[1] in PREPOSITIONS and parts[1] not in PARTICLES and known(parts[0], "v"):
        parts.insert(2, "the")  # ``move_along_row`` -> "move along the row": the article opens the noun phrase
    elif (
        len(parts) >= 2
        and parts[1] not in PARTICLES
        and parts[1] not in ("home", "here", "there")  # adverbs of place
        and known(parts[0], "v")  # a name opening with a noun is a noun phrase: "emergency stop"
    ):
        parts.insert(1, "the")
    return " ".join(parts)
