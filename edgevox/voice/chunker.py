"""Streaming text chunker: LLM deltas in, speakable pieces out, as early as is safe.

Why: TTS synthesizes a chunk at a time, so the first sound waits for the first
chunk. The chunker therefore releases a fast *first fragment* - a clause ending
in ``, ; :`` (or CJK ``，；：、``) once it has ``first_clause_min_words`` words -
and after that whole sentences, which sound more natural than clause-by-clause
prosody.

Sentence ends: ``. ! ? …`` followed by whitespace (a final ``.`` waits for the
next delta, so ``3.5`` and ``e.g.`` are never cut), CJK ``。！？`` (no space
needed), and line breaks (except inside a ```` ``` ```` code block, which stays one
chunk up to ``max_chars``, so speech cleaning can drop it whole). A ``.`` after a known abbreviation (``Mr.``, ``e.g.``,
``etc.`` ...), a single initial (``J. Smith``) or a list number at a line start
(``1. Go``) is not a sentence end; every other word - ``go.``, ``stop.`` - is.

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

ABBREVIATIONS = frozenset(
    """mr mrs ms dr prof sr jr st vs etc e.g i.e a.m p.m approx dept est fig no vol ca cf""".split()
)
"""Words (lower case, without the final dot) after which a ``.`` does not end a sentence."""

_CJK_SENTENCE = "。！？"
_CJK_CLAUSE = "，；：、"
_SENTENCE_MARKS = ".!?…"
_CLAUSE_MARKS = ",;:"
_CLOSERS = "\"')]}»”’」』"
_WORD = re.compile(r"[\w']+")
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

    @property
    def released(self) -> int:
        """Chunks released so far."""
        return self._released

    def feed(self, delta: str) -> list[str]:
        self._buf += delta
        out: list[str] = []
        while True:
            cut = self._find_cut(final=False)
            if cut is None:
                break
            piece, self._buf = self._buf[:cut], self._buf[cut:]
            self._emit(piece, out)
        return out

    def flush(self) -> list[str]:
        """Release everything left (the stream ended)."""
        out: list[str] = []
        while True:
            cut = self._find_cut(final=True)
            if cut is None:
                break
            piece, self._buf = self._buf[:cut], self._buf[cut:]
            self._emit(piece, out)
        rest, self._buf = self._buf, ""
        self._emit(rest, out, force=True)
        return out

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
                if buf[end].isspace() and not self._is_false_stop(i):
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

    def _is_false_stop(self, i: int) -> bool:
        """True if the ``.`` at ``i`` belongs to an abbreviation, an initial or a list number."""
        buf = self._buf
        if buf[i] != ".":
            return False
        j = i
        while j > 0 and not buf[j - 1].isspace():
            j -= 1
        word = buf[j:i].lstrip("\"'([{")
        if not word:
            return False
        if word.lower() in ABBREVIATIONS:
            return True
        if len(word) == 1 and word.isalpha() and word.isupper():
            return True  # an initial: "J. Smith"
        if word.isdigit():
            line_start = buf.rfind("\n", 0, j) + 1
            return not buf[line_start:j].strip()  # "1. Go forward" at the start of a line
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
