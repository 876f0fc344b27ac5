"""Chunker fuzz: random and LLM-shaped text, split into random deltas, always ends and loses nothing.

Seeded ``random`` (hypothesis is not a dependency), so a failure reproduces: the
message names the seed, the settings and the text.
"""

from __future__ import annotations

import random
import re
import time

import pytest

from edgevox.voice.chunker import Chunker, ChunkerSettings

LLM_PIECES = [
    "The answer is simple.",
    " {\n",
    "}\n",
    "[",
    "]",
    "{",
    "}",
    '{"name": "move", "arguments": {"distance_m": 2.5}}',
    '<tool_call>{"name": "go_to", "arguments": {"room": "kitchen"}}</tool_call>',
    '[{"a": 1}, {"b": [1, 2, {"c": null}]}]',
    "```python\nprint('hi')\n```\n",
    "```",
    '```json\n{\n  "ok": true\n}\n```',
    "- first item\n",
    "* second item\n",
    "1. Go forward\n",
    "2) Turn left\n",
    "## Heading\n",
    "> quoted line\n",
    "| a | b |\n|---|---|\n| 1 | 2 |\n",
    "**bold** and _italic_",
    "Dr. Smith said 3.5 meters, e.g. the hall.",
    "J. Doe agrees...",
    "Really?! Yes!!!",
    "你好。我是机器人！",
    "，；：",
    "\n",
    "\n\n",
    "  ",
    " - ",
    "-",
    ".",
    ",",
    ":",
    "😀",
    "word " * 60,
    "x" * 300,
    "supercalifragilistic" * 15,
    "and then " * 40,
]
ALPHABET = "abc xyz .,;:!?…{}[]()\"'\n\t-*#`|<>/\\。！？，、0123456789"


def llm_text(rng: random.Random) -> str:
    if rng.random() < 0.3:
        return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 400)))
    return "".join(rng.choice(LLM_PIECES) for _ in range(rng.randint(1, 12)))


def random_settings(rng: random.Random) -> ChunkerSettings:
    max_chars = rng.choice([20, 21, 33, 60, 220])
    return ChunkerSettings(
        first_clause_min_words=rng.choice([0, 1, 3]),
        first_fragment_max_words=rng.choice([0, 1, 4]),
        min_chunk_chars=rng.choice([0, 1, 2, 5, max_chars // 2]),
        max_chars=max_chars,
    )


def deltas(text: str, rng: random.Random) -> list[str]:
    if rng.random() < 0.1:
        return [text]  # the whole reply in one delta
    out, i = [], 0
    while i < len(text):
        step = rng.choice([1, 1, 2, 3, 5, 8, 20, 80])
        out.append(text[i : i + step])
        i += step
    return out


def run_bounded(chunker: Chunker, parts: list[str], budget: int) -> list[str]:
    """Feed and flush, failing (not hanging) if the chunker searches for cuts more than ``budget`` times."""
    calls = 0
    find_cut = chunker._find_cut

    def counted(final: bool) -> int | None:
        nonlocal calls
        calls += 1
        if calls > budget:
            raise AssertionError(f"chunker made no progress after {budget} cut searches")
        return find_cut(final)

    chunker._find_cut = counted  # type: ignore[method-assign]
    out: list[str] = []
    for part in parts:
        out += chunker.feed(part)
    return out + chunker.flush()


def no_space(text: str) -> str:
    return re.sub(r"\s+", "", text)


def check(text: str, parts: list[str], settings: ChunkerSettings, label: str) -> None:
    # Each cut removes at least one character, and each delta/flush adds one failed search.
    chunks = run_bounded(Chunker(settings), parts, budget=2 * len(text) + 2 * len(parts) + 10)
    assert no_space("".join(chunks)) == no_space(text), label
    for chunk in chunks:
        assert chunk and chunk == chunk.strip(), label
        assert len(chunk) <= settings.max_chars, f"{label}: {len(chunk)} chars: {chunk!r}"


def test_the_reported_hang_ends():
    chunker = Chunker()
    assert chunker.feed("The answer is simple.") == []
    assert chunker.feed(" {\n") == ["The answer is simple."]
    assert chunker.feed('"ok": true\n}\n') == ['{ "ok": true']
    assert chunker.flush() == ["}"]


@pytest.mark.parametrize("text", ["{\n", "{\n}\n", "- \n-\n", ".\n.\n.\n", "a\nb\nc\n", "[\n\n]\n", "```\n```\n"])
def test_short_pieces_alone_on_a_line_are_carried_not_lost(text):
    check(text, [text], ChunkerSettings(), repr(text))
    check(text, list(text), ChunkerSettings(), repr(text))


@pytest.mark.parametrize("seed", range(40))
def test_random_and_llm_shaped_text_terminates_and_loses_nothing(seed):
    rng = random.Random(seed)
    started = time.monotonic()
    for case in range(25):
        text = llm_text(rng)
        settings = random_settings(rng)
        check(text, deltas(text, rng), settings, f"seed={seed} case={case} {settings} text={text!r}")
    assert time.monotonic() - started < 5.0


def test_a_long_sentence_in_one_delta_is_cut_to_max_chars():
    text = "word " * 100 + "end. Next sentence."
    chunks = Chunker(ChunkerSettings(max_chars=60)).feed(text)
    assert chunks and all(len(c) <= 60 for c in chunks)
