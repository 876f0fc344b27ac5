"""Property tests of the streaming chunker: however a reply is split into deltas, feeding
always ends, no chunk is longer than ``max_chars``, and no word is lost or duplicated."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from edgevox.voice.chunker import Chunker, ChunkerSettings

words = st.sampled_from(
    [
        "Hello",
        "there.",
        "I",
        "can",
        "go",
        "to",
        "the",
        "kitchen,",
        "3.5",
        "metres!",
        "e.g.",
        "Mr.",
        "Smith",
        "1.",
        "ok?",
        "{",
        "}",
        "```",
        "-",
        "\n",
        "\n\n",
        "word" * 30,
        "。",
        "你好，",
        "…",
        ";",
        ":",
        '"quoted."',
    ]
)
reply_text = st.lists(words | st.text(max_size=8), max_size=80).map(" ".join)


def _split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({min(len(text), c) for c in cuts})
    pieces, last = [], 0
    for p in points:
        pieces.append(text[last:p])
        last = p
    pieces.append(text[last:])
    return pieces


@given(
    reply_text, st.lists(st.integers(min_value=0, max_value=2000), max_size=60), st.integers(0, 6), st.integers(20, 300)
)
def test_no_word_is_lost_and_no_chunk_is_too_long(text, cuts, first_words, max_chars):
    settings = ChunkerSettings(first_fragment_max_words=first_words, max_chars=max_chars)
    chunker = Chunker(settings)
    chunks: list[str] = []
    for delta in _split(text, cuts):
        chunks += chunker.feed(delta)
    chunks += chunker.flush()
    assert all(len(c) <= max_chars for c in chunks), [c for c in chunks if len(c) > max_chars]
    assert "".join("".join(chunks).split()) == "".join(text.split())
