"""What one command clause asks for, read with the parser: a :class:`RequestFrame`.

"could you please take off and climb to ten metres" has two clauses (see
:func:`edgevox.language.clauses.split_clauses`); each is read here into

- **verbs**: the clause's own verbs with their particles ("take off", "climb", "back up",
  "turn ... off"), not the verbs that only carry the request ("want", "need", "like",
  "let", "try", "can", "please");
- **nouns**: the lemmas of its nouns ("camera", "altitude", "light");
- **words**: the lower-case words, for direction cues, enum values and numbers.

A verb's particle is the adverb particle the parser attaches to it, or a particle word
right after the verb or after its object ("turn the lights off"): "take off" names another
action than "take", and "turn off" another than "turn".
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from edgevox.language.frames import WH_ATTRIBUTES, Phrase, noun_lemma
from edgevox.language.lexicon import attribute_nouns, base_form, known, lexname, made_adjective, motion_entailed
from edgevox.language.nlp import parse
from edgevox.language.paths import PATH_PREPOSITIONS, destination_follows, path_particle, place_follows
from edgevox.language.phrasal import PARTICLES, verb_particles
from edgevox.language.terms import is_direction, means_remaining
from edgevox.language.units import unit
from edgevox.language.words import WANT_VERBS, WISH_VERBS, can_be_base_verb
from edgevox.language.words import lemmas as readings

CARRIER_VERBS = WANT_VERBS | WISH_VERBS | frozenset("let try mind help would could can will please be".split())
"""Verbs that carry a request ("I want you to ...", "let's ...", "would you mind ..."): the
action is the verb they govern."""
HALF_TURN_PARTICLES = frozenset(("around", "round", "about"))
"""Particles of a turn that ends facing the other way ("turn *around*", "spin round")."""
ASPECTUAL_VERBS = frozenset("start begin commence keep continue resume".split())
"""English aspectual verbs: they say when an act starts or goes on, and the gerund after them
says the act ("start *patrolling*", "keep *driving*")."""
MEASURE_NOUNS = frozenset("bit little lot way amount notch tad touch step".split())
"""Nouns of an amount ("a *bit*", "a *notch*"): never a tool's object."""
ARGUMENT_DEPS = frozenset(("nsubj", "nsubjpass", "dobj", "pobj"))
"""Dependency labels of a noun phrase's head: its word is a noun even if the tagger says not."""
DESTINATION_WORDS = frozenset("to into onto towards toward home".split())
INTENSIFIED = frozenset("now here there away ahead back behind after before then off".split())
"""After "back": a destination follows, so "back" means a return ("go back to the dock")."""
FILLERS = frozenset("oh uh um umm uhm er erm hmm ah well okay ok alright hey so now just yes yeah please".split())


@dataclass(frozen=True)
class RequestFrame:
    text: str
    verbs: tuple[Phrase, ...]
    nouns: frozenset[str]
    words: tuple[str, ...]
    lemmas: frozenset[str]

    sequence: tuple[tuple[str, str, bool], ...] = ()
    """Each word in order: (lemma, word, a modifier: a determiner, number or adjective that
    may stand inside a name said as a phrase: "take three quick snapshots")."""

    noun_opening: bool = False
    """The only verb is the opening word, which the tagger read as a noun ("thermostat to
    19.5"): it is kept as a verb and as a noun, and the request counts as verbless."""

    @property
    def directions(self) -> frozenset[str]:
        """The adverbs of direction said ("forward", "left", "up"); "back" before a destination
        ("go *back* to the dock", "come back home") is a return, not a direction."""
        return frozenset(
            w
            for i, w in enumerate(self.words)
            if is_direction(w)
            and not means_remaining(self.words, i)
            and not self.returning_at(i)
            and not intensifier(self.words, i)
            and not self._verb_particle(i)
            and not self._path_to(i)
        )

    def _path_to(self, i: int) -> bool:
        """ "pop *down* to the cafeteria": the particle is the path to a destination (the verb
        was also read without it, see ``_path_particle``), not a direction of the motion."""
        w = self.words[i]
        nxt = self.words[i + 1] if i + 1 < len(self.words) else ""
        return nxt in PATH_PREPOSITIONS and any(
            v.particle == w and any(u.verb == v.verb and not u.particle for u in self.verbs) for v in self.verbs
        )

    def _verb_particle(self, i: int) -> bool:
        """ "back *up*": the particle of a direction said as the verb is part of that verb."""
        prev = self.words[i - 1] if i else ""
        return any(v.verb == prev and v.particle == self.words[i] and is_direction(prev) for v in self.verbs)

    def returning_at(self, i: int) -> bool:
        nxt = self.words[i + 1] if i + 1 < len(self.words) else ""
        return self.words[i] == "back" and nxt in DESTINATION_WORDS

    @property
    def has_verb(self) -> bool:
        return bool(self.verbs) and not self.noun_opening


@functools.lru_cache(maxsize=1024)
def read_request(text: str) -> RequestFrame:
    """The verbs, nouns and words of one command clause. Cached (a frame is immutable): the
    resolver reads the same clause once per tool it weighs (``resolver_args``: switching verbs,
    "turn around", a verb that names a parameter)."""
    doc = parse(text)
    toks = [t for t in doc if not t.is_punct]
    verbs: list[Phrase] = []
    nouns: set[str] = set()
    noun_opening = False
    addressed = _addressee(doc)
    content = [
        t for t in toks if t.lower_.replace("'", "") not in FILLERS and t.pos_ != "INTJ" and t.i not in addressed
    ]
    # A command opens with its verb ("lower the arm", "back up"); the tagger sometimes reads an
    # imperative as a noun or an adjective there.
    opening = next((t for t in content if t.lower_ not in CARRIER_VERBS and t.pos_ not in ("PRON", "AUX")), None)
    for i, t in enumerate(toks):
        word = t.lower_
        lemma = t.lemma_.lower()
        is_opening = opening is not None and t.i == opening.i and (can_be_base_verb(word) or _rare_verb(word))
        # "go *park* on your charger": a bare verb right after "go" is the act, whatever the tag
        is_opening = is_opening or (
            i > 0 and toks[i - 1].lower_ in SERIAL_VERBS and t.tag_ in ("NN", "VB") and can_be_base_verb(word)
        )
        after_number = i > 0 and toks[i - 1].like_num
        back_up = is_opening and i + 1 < len(toks) and toks[i + 1].lower_ in PARTICLES
        if is_direction(word) and not back_up and not means_remaining([x.lower_ for x in toks], i):
            continue  # "pan *left*" is not "leave"; but "*back* up" is a verb, and "is left" is "leave"
        if after_number and unit(word) is not None:
            continue  # "ten *metres*": a unit
        if t.tag_ == "VBG" and i > 0 and not (opening is not None and t.i == opening.i):
            if toks[i - 1].lemma_.lower() in ASPECTUAL_VERBS and "VERB" in readings(word):
                if Phrase(lemma) not in verbs:
                    verbs.append(Phrase(lemma))  # "start *patrolling*": the gerund says the act
                continue
            nouns.add(word)  # "stop *recording*": the activity is the object
        if t.pos_ == "VERB" and t.dep_ in ARGUMENT_DEPS and any(c.dep_ in ("det", "poss") for c in t.children):
            nouns.add(noun_lemma(word))  # "activate the bilge *pump*": a word with a determiner is a noun
            continue
        tagged_verb = t.pos_ == "VERB" and "VERB" in readings(word)  # the lexicon vetoes a tagger slip
        if t.pos_ == "VERB" and not tagged_verb and not is_opening:
            nouns.add(lemma)  # "thermostat to 19.5": a noun the tagger read as a verb
            continue
        if is_opening and t.pos_ in ("NOUN", "PROPN"):
            nouns.add(lemma)
            noun_opening = True
        if tagged_verb and not is_opening and not _asked_for(t):
            continue  # "hold off on *going* to the kitchen": the verb of a complement, not the request
        if tagged_verb or is_opening:
            base = word if is_opening else lemma
            particles = verb_particles(toks, i)
            if base == "let":  # "let it *down*": the particle heads the small clause "let" takes
                particles = particles or [c.lower_ for c in t.children if c.dep_ == "ccomp" and c.lower_ in PARTICLES]
            if (base in CARRIER_VERBS or word in CARRIER_VERBS) and not (base == "let" and particles):
                continue  # "let's go": a carrier; "let it down": a phrasal verb (WordNet: lower)
            phrases = [Phrase(base, particle) for particle in particles or [""]]
            if particles and (path_particle(toks, i, particles[-1]) or particles[-1] in HALF_TURN_PARTICLES):
                # "head *over* to dock two": a path, the verb is "head"; "turn *around*": a
                # turning that ends facing the other way, still a turn
                phrases.append(Phrase(base))
            if particles and particles[-1] == "back" and place_follows(toks, i, "back"):
                # "head *back* to the dock", "park yourself *back* at the dock": "back" before a
                # place says where to, the verb stays bare; a verb of motion so said is a return
                # (WordNet's return.v.01: "go or come back to a place"), and so is a phrasal verb
                # with "back" whose first sense is a motion ("*take* the rig *back* to the start
                # mark": take back, return.v.05, "bring back to the point of departure")
                phrases.append(Phrase(base))
                if "verb.motion" in (lexname(base, "v"), lexname(f"{base} back", "v")):
                    phrases.append(Phrase("return"))
            if is_direction(base):
                phrases.append(Phrase("move"))  # "back up", "back off": a move in that direction
            # an object, not a measure ("slow down to 4 km/h": "h" is no object)
            carried = any(c.dep_ == "dobj" and not c.like_num and unit(c.lower_) is None for c in t.children)
            if carried and (went := motion_entailed(base)) and destination_follows(toks, i):
                # "take this up to room 412": carrying a thing (the object) somewhere entails going there
                # (WordNet: bring.v.01, "take something or somebody with oneself somewhere",
                # entails come.v.01); the request names the destination of that motion
                phrases.append(Phrase(went))
            if not carried and not is_direction(base):
                # "slow down", "cool down", "brighten": a verb that is an adjective, or is made
                # from one, changes what that adjective is a value of (WordNet's attribute:
                # slow -> speed), the object it does not name
                adjective = base if known(base, "a") else made_adjective(base)
                nouns |= {n for n in attribute_nouns(adjective or "") if " " not in n}
            for phrase in phrases:
                if phrase not in verbs:
                    verbs.append(phrase)
        elif t.pos_ in ("NOUN", "PROPN") and lemma not in MEASURE_NOUNS:
            nouns.add(lemma)
        elif t.dep_ in ARGUMENT_DEPS and t.pos_ in ("ADJ", "VERB", "X") and not t.like_num:
            nouns.add(noun_lemma(word))  # "is the *gripper* open": a subject is a noun, whatever the tag
        elif t.dep_ == "amod" and t.pos_ == "ADJ" and "NOUN" in readings(word) and not is_direction(word):
            nouns.add(noun_lemma(word))  # "your *joint* positions": a noun before a noun, tagged an adjective
        elif t.pos_ in ("ADJ", "ADV") and i > 0 and toks[i - 1].lower_ == "how":
            nouns |= attribute_nouns(word)  # "how *high* are we" asks for the height
        if word in WH_ATTRIBUTES and i == _first_content(toks):
            nouns |= WH_ATTRIBUTES[word]  # "*where* are you" asks for the location
    words = tuple(t.lower_ for t in toks)
    lemmas = frozenset(t.lemma_.lower() for t in toks)
    noun_opening = noun_opening and len({v.verb for v in verbs}) == 1
    sequence = tuple((t.lemma_.lower(), t.lower_, t.pos_ in ("DET", "NUM", "ADJ") or t.like_num) for t in toks)
    return RequestFrame(text, tuple(verbs), frozenset(nouns), words, lemmas, sequence, noun_opening)


def intensifier(words: Sequence[str], i: int) -> bool:
    """ "*right* now", "*right* there": "right" before an adverb of time or place stresses it;
    it is no direction."""
    return words[i] == "right" and i + 1 < len(words) and words[i + 1] in INTENSIFIED


def _rare_verb(word: str) -> bool:
    """A word the general lexicon does not know at all but WordNet has as a verb in its base
    form ("*hoover* the bedroom"): it can open a command as well as a common verb can."""
    return not readings(word) and known(word, "v") and base_form(word, "v") == word


def _first_content(toks: list) -> int:
    return next((k for k, t in enumerate(toks) if t.lower_.replace("'", "") not in FILLERS and t.pos_ != "INTJ"), -1)


OBJECT_DEPS = ("dobj", "obj", "attr", "oprd", "intj", "npadvmod", "ccomp")
"""Dependency labels of what a verb takes as its object: a noun phrase ("pick up *the cup*"),
or what is said ("say *hello*", "say *good morning*", "announce *that dinner is ready*")."""


REFERRING_PRONOUNS = frozenset("it them that this these those".split())
"""Pronouns that stand for a thing said before ("turn *it* up"); "me", "us" are the speakers."""


def pronoun_object(text: str) -> str | None:
    """The verb with its particle when its only object is a pronoun that stands for a thing
    ("turn *it* up a bit" -> "turn up", "switch *that* off" -> "switch off"), else None: what
    is meant was said before, or not at all."""
    doc = parse(text)
    for t in doc:
        if t.dep_ == "dobj" and t.lower_ in REFERRING_PRONOUNS and t.head.pos_ == "VERB":
            verb = t.head
            if any(c.dep_ == "dobj" and c.i != t.i for c in verb.children):
                return None
            particle = next((c.lower_ for c in verb.children if c.dep_ == "prt"), "")
            return f"{verb.lower_} {particle}".strip()
    return None


def object_phrase(text: str) -> str | None:
    """The direct object of the request's verb as said, without its determiner ("pick up *the
    red cup* please" -> "red cup", "add *eggs* to the list" -> "eggs"), or None when it has
    none or it is a pronoun ("bring *me* to the kitchen", "do *it*")."""
    doc = parse(text)
    for t in doc:
        if (
            t.dep_ in OBJECT_DEPS
            and t.pos_ in ("NOUN", "PROPN", "INTJ", "X", "AUX", "VERB")
            and t.head.pos_ == "VERB"
            and t.i > t.head.i  # an object follows its verb ("say *hello*"; not "*please* pick up")
            and t.lower_ not in ("please", "thanks")
        ):
            if t.dep_ == "npadvmod" and (t.like_num or any(c.like_num for c in t.children)):
                continue  # "drive *two metres*": a measure, not an object
            if _vocative(doc, t):
                continue  # "follow me, *Rex*": the one spoken to, not the object
            words = [w for w in t.subtree if not w.is_punct]
            while words and (
                (words[0].pos_ in ("DET", "PRON") and words[0].dep_ in ("det", "poss", "predet"))
                or words[0].dep_ == "mark"
            ):
                words = words[1:]
            if words:
                return doc[words[0].i : words[-1].i + 1].text
    return None


def _addressee(doc: Any) -> frozenset[int]:
    """The one spoken to, set off by a comma before the command ("alright *mate*, park
    yourself", "*Rex*, sit"), when a verb follows the comma. Its words are no verb of the
    request."""
    comma = next((t.i for t in doc if t.text == ","), None)
    if comma is None or not any(t.pos_ in ("VERB", "AUX") for t in doc[comma + 1 :]):
        return frozenset()
    return addressee(list(doc[:comma]))


def addressee(toks: list[Any]) -> frozenset[int]:
    """The positions of a name or a word for a person said alone, with fillers, interjections
    or a determiner around it ("Rex", "alright mate", "hey buddy", "my friend"): a form of
    address (WordNet's class noun.person, or a capitalised proper noun), not a request."""
    content = [t for t in toks if t.pos_ not in ("INTJ", "PUNCT") and t.lower_ not in FILLERS]
    if not content or content[-1].pos_ not in ("NOUN", "PROPN"):
        return frozenset()
    if any(t.pos_ not in ("DET", "PRON") for t in content[:-1]):
        return frozenset()
    name = content[-1]
    if (name.pos_ == "PROPN" and name.text[:1].isupper()) or lexname(name.lower_, "n") == "noun.person":
        return frozenset(t.i for t in content)
    return frozenset()


def _vocative(doc: Any, t: Any) -> bool:
    """A noun phrase set off by a comma at the end or the start of the request ("follow me,
    Rex", "Rex, sit"): the one spoken to."""
    first, last = t.left_edge.i, t.right_edge.i
    rest = [w for w in doc[last + 1 :] if not w.is_punct]
    before = doc[first - 1] if first > 0 else None
    after = doc[last + 1] if last + 1 < len(doc) else None
    at_end = not rest and before is not None and before.text == ","
    at_start = first == 0 and after is not None and after.text == ","
    return at_end or at_start


def directions_in(text: str) -> str:
    """The adverbs of direction said in ``text``, as words ("point the camera up" -> "up"); the
    particle of "back up" / "back off" is part of the verb, not a direction of its own."""
    words = re.findall(r"[a-z]+", text.lower())
    kept = [w for i, w in enumerate(words) if is_direction(w) and not (i > 0 and words[i - 1] == "back")]
    return " ".join(kept)


LEADING_CONJUNCTIONS = frozenset("and then also so after afterwards next".split())


def strip_conjunction(clause: str) -> str:
    """A clause without the conjunctions that joined it to the one before ("and then land" -> "land")."""
    words = clause.split()
    while len(words) > 1 and words[0].lower().strip(",") in LEADING_CONJUNCTIONS:
        words = words[1:]
    return " ".join(words)


def has_subject(text: str) -> bool:
    """A sentence with a subject of its own ("my friend set a timer"), not a fragment ("five
    then", "to the right"): an answer to a question is a fragment or a command. Only the main
    clause counts: "as far up as *it*'ll go" is a fragment with a comparative clause."""
    return any(t.dep_ in ("nsubj", "nsubjpass", "expl") and t.head.dep_ in ("ROOT", "conj") for t in parse(text))


SERIAL_VERBS = frozenset(("go", "come"))
"""Verbs of motion that take a bare verb right after them ("*go* park yourself", "*come* see
this"): the second verb says the act, the first the motion to it."""


def _serial(verb: Any) -> bool:
    return verb.tag_ == "VB" and verb.i == verb.head.i + 1 and verb.head.lemma_.lower() in SERIAL_VERBS


def _asked_for(verb: Any) -> bool:
    """The verb is what the clause asks for: its main verb, a verb coordinated with it ("go and
    *get* the cup", "go *park*"), or the complement of a verb that carries a request ("I want you to *land*",
    "try to *turn*"); not the complement of another verb ("hold off on *going*")."""
    head = verb
    while True:
        if head.dep_ == "ROOT":
            return True
        if head.dep_ == "conj" or _serial(head):
            head = head.head
            continue
        if head.dep_ in ("xcomp", "ccomp") and (
            head.head.lower_ in CARRIER_VERBS or head.head.lemma_.lower() in CARRIER_VERBS
        ):
            head = head.head
            continue
        return False
