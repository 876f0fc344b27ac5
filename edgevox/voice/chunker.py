"""Streaming text chunker: LLM deltas in, speakable pieces out, as early as is safe.

Why: TTS synthesizes a chunk at a time, so the first sound waits for the first
chunk. The chunker therefore releases a fast *first fragment* - a clause ending
in ``, ; :`` (or CJK ``，；：、``) once it has ``first_clause_min_words`` words -
and after that whole sentences, which sound more natural than clause-by-clause
prosody.

Sentence ends: ``! ? …`` followed by whitespace, CJK ``。！？`` (no space needed),
line breaks (except inside a ```` ``` ```` code block, which stays one chunk up to
``max_chars``, so speech cleaning can drop it whole), and a ``.`` that pysbd (a
rule-based sentence boundary detector) calls a sentence end. A ``.`` is decided once
the first character of the next word has arrived (``3.5``, ``e.g.`` and ``p.m. and``
are never cut; ``go.``, ``etc. The`` and ``p.m. Tomorrow`` are), except after a word
in :data:`NEVER_FINAL` (``Dr.``, ``vs.``, ``approx.``, where pysbd errs) or a list
number at a line start (``1. Go``), which never end a sentence.

Why pysbd only there: it costs ~0.5-1 ms a call (on a 2-core board), too much per
token but little per sentence, and a plain word before a capital ("go. Then", "Okay. I":
most sentence ends in a reply) does not ask it; the streaming, the fast first fragment and the cuts
stay hand-written because they are the product (pysbd sees whole texts). Each ``.``
is asked about once per chunk (the answer is cached until the buffer is cut), at most
:data:`PYSBD_CALLS_PER_DELTA` a delta. On the
table of tricky texts in ``scripts/bench_text_libs.py`` the hand-written abbreviation
list this replaced decided 47 of 57 sentence marks right, this 55.

A sentence longer than ``max_chars`` is cut at its last clause mark or space so
TTS never waits for a runaway sentence; no chunk is longer than ``max_chars``.

Every cut removes text from the buffer, so :meth:`Chunker.feed` always ends. A
piece too short to speak alone (a stray ``{`` or ``-`` on its own line) is
carried and spoken at the start of the next chunk; putting it back into the
buffer instead would find the same cut again forever (the bug this rules out).

Not thread-safe; one turn worker owns one chunker per turn.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pysbd

NEVER_FINAL = frozenset("mr mrs ms dr prof sr jr vs e.g i.e approx cf fig".split())
"""Words (lower case, without the final dot) after which a ``.`` never ends a sentence: titles
and abbreviations that always lead into more words (pysbd cuts after ``approx.`` and ``vs. B.``)."""

PYSBD_CONTEXT_CHARS = 40
"""Text before a dot that pysbd sees (from a word start; its cost grows with the text)."""
PYSBD_CALLS_PER_DELTA = 8
"""Dots pysbd is asked about per :meth:`Chunker.feed` (a token rarely brings more than one);
past that a dot ends a sentence unless it follows an initial, so a delta flooded with dots
(``"x. y. " * 4000`` in one piece) costs milliseconds, not seconds."""

_CJK_SENTENCE = "。！？"
_CJK_CLAUSE = "，；：、"
_SENTENCE_MARKS = ".!?…"
_CLAUSE_MARKS = ",;:"
_CLOSERS = "\"')]}»”’」』"
_WORD = re.compile(r"[\w']+")
_PLAIN_WORD = re.compile(r"[a-z]{2,}|[A-Z][a-z]{3,}")
"""A word whose ``.`` before a capital is a sentence end without asking pysbd (not "St.", "U.S.")."""
_CJK_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


@dataclass(frozen=True)
class ChunkerSettings:
    first_clause_min_words: int = 3
    """Words needed before a clause mark releases the first fragment (0 = no early fragment)."""
    first_fragment_max_words: int = 4
    """If > 0 and no clause or sentence mark came yet, release the first fragment after this many
    words anyway (lower latency on long first sentences, slightly flatter prosody). 0 = off.
    Each word costs ~12 ms of SmolLM2 decoding and ~15 ms of Piper on 2 cores before the first
    sound; 4 words keep the fragment a phrase ("I can help you") rather than a word."""
    min_chunk_chars: int = 2
    """Shorter pieces (stray punctuation) are merged into the next chunk."""
    max_chars: int = 220
    """A sentence longer than this is cut at a clause mark or a space."""

    def __post_init__(self) -> None:
        if self.first_clause_min_words < 0:
            raise ValueError(f"chunker.first_clause_min_words = {self.first_clause_min_words}: must be >= 0")
        if self.max_chars < 20:
            raise ValueError(f"chunker.max_chars = {self.max_chars}: must be >= 20")
        if not 0 <= self.min_chunk_chars <= self.max_chars // 2:
            raise ValueError(f"chunker.min_chunk_chars = {self.min_chunk_chars}: must be between 0 and max_chars / 2")


class Chunker:
    """Feed text deltas with :meth:`feed`; call :meth:`flush` at the end of the stream."""

    def __init__(self, settings: ChunkerSettings | None = None) -> None:
        self.settings = settings or ChunkerSettings()
        self._buf = ""
        self._carry = ""
        """A piece too short to speak alone, spoken at the start of the next chunk."""
        self._released = 0
        self._segmenter: pysbd.Segmenter | None = None
        """Made on the first ``.`` to decide (pysbd's segmenter keeps state: one per chunker)."""
        self._asks_left = PYSBD_CALLS_PER_DELTA
        self._dot_ends: dict[int, bool] = {}
        """Buffer index of a ``.`` -> whether it ends a sentence; cleared when the buffer is cut."""

    @property
    def released(self) -> int:
        """Chunks released so far."""
        return self._released

    def feed(self, delta: str) -> list[str]:
        self._buf += delta
        self._asks_left = PYSBD_CALLS_PER_DELTA
        out: list[str] = []
        while True:
            cut = self._find_cut(final=False)
            if cut is None:
                break
            self._cut(cut, out)
        return out

    def flush(self) -> list[str]:
        """Release everything left (the stream ended)."""
        self._asks_left = PYSBD_CALLS_PER_DELTA
        out: list[str] = []
        while True:
            cut = self._find_cut(final=True)
            if cut is None:
                break
            self._cut(cut, out)
        rest, self._buf = self._buf, ""
        self._emit(rest, out, force=True)
        return out

    def _cut(self, cut: int, out: list[str]) -> None:
        piece, self._buf = self._buf[:cut], self._buf[cut:]
        self._dot_ends.clear()  # indices moved
        self._emit(piece, out)

    def _emit(self, piece: str, out: list[str], force: bool = False) -> None:
        text = piece.strip()
        if self._carry and (text or force):
            text = f"{self._carry} {text}".strip()
            self._carry = ""
        if not text:
            return
        if len(text) < self.settings.min_chunk_chars and not force and not _CJK_CHAR.search(text):
            self._carry = text  # too short to speak alone: it starts the next chunk
            return
        out.append(text)
        self._released += 1

    # -- boundary search ---------------------------------------------------------------------

    def _find_cut(self, final: bool) -> int | None:
        """Index just after the first releasable boundary in the buffer, or None.

        A boundary that would make a chunk longer than ``max_chars`` (a long sentence that
        arrived in one delta) gives way to a forced cut."""
        cut = self._find_boundary(final)
        if cut is not None and len(self._buf[:cut].strip()) > self._room():
            return self._forced_cut()
        if cut is None and len(self._buf) > self._room():
            return self._forced_cut()
        return cut

    def _room(self) -> int:
        """Characters the next chunk may take from the buffer (a carried piece takes some)."""
        return self.settings.max_chars - (len(self._carry) + 1 if self._carry else 0)

    def _find_boundary(self, final: bool) -> int | None:
        buf = self._buf
        n = len(buf)
        want_clause = self._released == 0 and self.settings.first_clause_min_words > 0
        i = 0
        in_fence = False
        while i < n:
            ch = buf[i]
            if buf.startswith("```", i):
                if in_fence:
                    return i + 3  # a whole code block is one chunk, which speech cleaning drops
                in_fence = True
                i += 3
                continue
            if in_fence:
                i += 1
                continue
            if ch == "\n":
                if buf[:i].strip():
                    return i + 1
            elif ch in _CJK_SENTENCE or (want_clause and ch in _CJK_CLAUSE):
                return self._after_closers(i + 1)
            elif ch in _SENTENCE_MARKS:
                end = self._after_marks(i)
                if end >= n:
                    if final:
                        return end
                    return None  # cannot tell "3." from "3.5" or "e." from "e.g." yet
                if buf[end].isspace():
                    ends = self._dot_ends_sentence(i, end, final) if ch == "." else True
                    if ends is None:
                        return None  # the next word has not started: "p.m. and" or "p.m. Tomorrow"?
                    if ends:
                        return end
                i = end
                continue
            elif want_clause and ch in _CLAUSE_MARKS:
                end = self._after_closers(i + 1)
                if end < n and buf[end].isspace() and self._word_count(buf[:i]) >= self.settings.first_clause_min_words:
                    return end
            i += 1
        if in_fence:
            return None  # wait for the closing fence (or max_chars)
        if want_clause and self.settings.first_fragment_max_words > 0:
            cut = self._after_words(self.settings.first_fragment_max_words)
            if cut is not None:
                return cut
        return None

    def _after_words(self, count: int) -> int | None:
        """Index after the whitespace that follows the ``count``-th complete word, if present."""
        for i, match in enumerate(re.finditer(r"\S+(\s+)", self._buf), start=1):
            if i == count:
                return match.end()
        return None

    def _after_marks(self, i: int) -> int:
        """Index after a run of sentence marks (``?!``, ``...``) and closing quotes/brackets."""
        buf = self._buf
        while i < len(buf) and buf[i] in _SENTENCE_MARKS:
            i += 1
        return self._after_closers(i)

    def _after_closers(self, i: int) -> int:
        buf = self._buf
        while i < len(buf) and buf[i] in _CLOSERS:
            i += 1
        return i

    def _dot_ends_sentence(self, i: int, end: int, final: bool) -> bool | None:
        """Whether the ``.`` at ``i`` (marks and closers up to ``end``, whitespace after) ends a
        sentence; None until the next word's first character is in the buffer."""
        if i in self._dot_ends:
            return self._dot_ends[i]
        buf = self._buf
        j = i
        while j > 0 and not buf[j - 1].isspace():
            j -= 1
        word = buf[j:i].lstrip("\"'([{")
        line_start = buf.rfind("\n", 0, j) + 1
        nxt = end
        while nxt < len(buf) and buf[nxt].isspace():
            nxt += 1
        if word.lower() in NEVER_FINAL or (word.isdigit() and not buf[line_start:j].strip()):
            ends = False  # "Dr. Smith", "1. Go forward" at the start of a line
        elif nxt == len(buf):
            return True if final else None
        elif _PLAIN_WORD.fullmatch(word) and buf[nxt].isupper():
            ends = True  # "go. Then", "Okay. I": what pysbd says, without its ~0.5 ms
        elif i - (len(buf) - len(buf.lstrip())) >= self._room():
            ends = False  # a cut here would be forced anyway (max_chars)
        elif self._asks_left <= 0:
            ends = not (len(word) == 1 and word.isupper())  # a flood of dots: no initial, else an end
        else:
            self._asks_left -= 1
            if self._segmenter is None:
                self._segmenter = pysbd.Segmenter(language="en", clean=False, char_span=False)
            start = max(line_start, buf.rfind(" ", 0, max(line_start, i - PYSBD_CONTEXT_CHARS)) + 1)
            ends = self._segment_ends_between(buf[start : nxt + 1], i - start, nxt - start)
        self._dot_ends[i] = ends
        return ends

    def _segment_ends_between(self, window: str, dot: int, stop: int) -> bool:
        """Whether pysbd ends a sentence of ``window`` after index ``dot`` and before ``stop``.
        Its pieces are found in the window rather than summed (it drops leading blanks)."""
        assert self._segmenter is not None
        pos = 0
        for sentence in self._segmenter.segment(window):
            core = sentence.strip()
            found = window.find(core, pos) if core else -1
            if found < 0:
                continue
            pos = found + len(core)
            if dot < pos < stop:
                return True
        return False

    @staticmethod
    def _word_count(text: str) -> int:
        return len(_WORD.findall(text))

    def _forced_cut(self) -> int:
        """Cut an over-long sentence at its last clause mark, else its last space, else hard."""
        limit = self._room()
        head = self._buf[:limit]
        for marks in (_CLAUSE_MARKS + _CJK_CLAUSE, " "):
            best = max(head.rfind(m) for m in marks)
            if best > limit // 3:
                return best + 1
        return limit
