"""Chunker, speech cleaning and stop-phrase rules."""

from __future__ import annotations

import pytest

from edgevox.voice.chunker import Chunker, ChunkerSettings
from edgevox.voice.speechtext import clean_for_speech, number_to_words, ordinal_to_words
from edgevox.voice.stop_phrases import StopPhraseMatcher


def chunk_stream(text: str, settings: ChunkerSettings | None = None, step: int = 1) -> list[str]:
    chunker = Chunker(settings)
    out: list[str] = []
    for i in range(0, len(text), step):
        out += chunker.feed(text[i : i + step])
    return out + chunker.flush()


def test_first_fragment_is_a_clause_then_whole_sentences():
    text = "Sure thing my friend, I will go to the kitchen now, and then come back. Done."
    assert chunk_stream(text) == [
        "Sure thing my friend,",
        "I will go to the kitchen now, and then come back.",
        "Done.",
    ]


def test_a_long_first_sentence_is_cut_after_four_words_by_default():
    text = "I am going to the kitchen to get you a glass of water. It is cold."
    assert chunk_stream(text) == ["I am going to", "the kitchen to get you a glass of water.", "It is cold."]
    # Off: the first fragment waits for a clause or sentence mark.
    assert chunk_stream(text, ChunkerSettings(first_fragment_max_words=0))[0] == text.split(" It")[0]
    # A word is complete only when the next one starts, so "to" alone is not yet released.
    chunker = Chunker()
    assert chunker.feed("I am going to") == []
    assert chunker.feed(" the") == ["I am going to"]


def test_a_short_clause_does_not_release_the_first_fragment():
    assert chunk_stream("Yes, I can. Going now.") == ["Yes, I can.", "Going now."]


def test_go_dot_ends_a_sentence_but_abbreviations_decimals_and_initials_do_not():
    text = "Let's go. Dr. Smith said 3.5 meters, e.g. the hall. J. Doe agrees."
    assert chunk_stream(text, ChunkerSettings(first_clause_min_words=0)) == [
        "Let's go.",
        "Dr. Smith said 3.5 meters, e.g. the hall.",
        "J. Doe agrees.",
    ]


def test_a_final_dot_waits_for_the_next_delta():
    chunker = Chunker()
    assert chunker.feed("It is 3.") == []
    assert chunker.feed("5 meters away. Next") == ["It is 3.5 meters away."]
    assert chunker.flush() == ["Next"]


def test_cjk_punctuation_splits_without_spaces():
    assert chunk_stream("你好。我是机器人！你呢？好的") == ["你好。", "我是机器人！", "你呢？", "好的"]


def test_newlines_and_list_numbers():
    assert chunk_stream("Steps:\n1. Go forward\n2. Turn left\n") == ["Steps:", "1. Go forward", "2. Turn left"]


def test_runaway_sentences_are_cut():
    text = "word " * 100
    chunks = chunk_stream(text, ChunkerSettings(max_chars=60))
    assert all(len(c) <= 60 for c in chunks) and " ".join(chunks).split() == text.split()


@pytest.mark.parametrize(
    ("raw", "spoken"),
    [
        ("**Sure!** Go to [the kitchen](http://x.com).", "Sure! Go to the kitchen."),
        (
            "Move 10 m at 1.5 m/s, then 1 m left.",
            "Move ten meters at one point five meters per second, then one meter left.",
        ),
        ("It is 22°C & 45% humid 😀", "It is twenty-two degrees Celsius and forty-five percent humid"),
        ("See https://example.com/a?b=1", "See a link"),
        ("## Plan\n- go 3 km", "Plan go three kilometers"),
        ("The 1st, 2nd and 21st.", "The first, second and twenty-first."),
        ("It costs $5.", "It costs five dollars."),
        ("1,200 robots", "one thousand two hundred robots"),
        ("```", ""),
    ],
)
def test_clean_for_speech(raw, spoken):
    assert clean_for_speech(raw) == spoken


@pytest.mark.parametrize(
    ("raw", "spoken"),
    [
        ('{"name": "move", "arguments": {"distance_m": 2}}', ""),
        ('Okay. {"name": "move", "arguments": {"distance_m": 2}} Done.', "Okay. Done."),
        ('<tool_call>{"name": "go_to", "arguments": {"room": "kitchen"}}</tool_call>', ""),
        ('<tool_call>{"name": "go_to"', ""),  # cut off mid-call by the chunker
        ('{ "ok": true', ""),  # an object split across chunks: its first line...
        ('"distance_m": 2.5,', ""),  # ... a member line ...
        ("}", ""),  # ... and its closing brace
        ("],", ""),
        ('[{"a": 1}, {"b": [1, 2]}]', ""),
        ("[1, 2, 3]", ""),
        ('["kitchen", "hall"]', ""),
        ("[laughs] Sure.", "laughs Sure."),
        ("The room {kitchen} is clean.", "The room is clean."),
        ("```python\nprint(1)\nx = 2\n```", ""),
        ("Here:\n```\nrm -rf /\n", "Here:"),
        ("```python", ""),
        ("I am <b>here</b>.<br/>", "I am here."),
        ("Done<|im_end|>", "Done"),
        ("It is 3 < 5 and 7 > 2.", "It is three less than five and seven greater than two."),
        ('He said "hi": twice.', 'He said "hi": twice.'),
        ("Move 2 m forward, then turn 90°.", "Move two meters forward, then turn ninety degrees."),
    ],
)
def test_machine_text_is_never_spoken(raw, spoken):
    assert clean_for_speech(raw) == spoken


def test_number_words():
    assert number_to_words(0) == "zero"
    assert number_to_words(1205) == "one thousand two hundred five"
    assert number_to_words(-42) == "minus forty-two"
    assert ordinal_to_words(12) == "twelfth" and ordinal_to_words(30) == "thirtieth"


@pytest.mark.parametrize(
    "text",
    [
        "stop",
        "Stop!",
        "STOP.",
        "stop it now",
        "Halt",
        "freeze!",
        "Emergency stop",
        "please don't go, stop!",
        "Not now. Stop.",
        "STOP!!!",
        "ＳＴＯＰ",  # full-width letters
        "ｓｔｏｐ！",
        "stop stop stop",
        "don't do that, stop",
        "don't do that stop",  # the negation belongs to "do"; the final "stop" is a command
        "don’t touch that stop",
        "no no no stop",
    ],
)
def test_stop_phrases_match(text):
    assert StopPhraseMatcher().match(text)


@pytest.mark.parametrize(
    "text",
    [
        "don't stop",
        "Don’t stop the music",
        "do not stop",
        "never stop",
        "non-stop",
        "nonstop music",
        "NON-STOP",
        "don't you stop",
        "don't ever stop",
        "ｄｏｎ'ｔ ｓｔｏｐ",
        "stopwatch",
        "keep going",
        "",
    ],
)
def test_negated_or_absent_stop_phrases_do_not_match(text):
    assert StopPhraseMatcher().match(text) is None


def test_stop_phrases_are_configurable():
    matcher = StopPhraseMatcher(["abort mission"])
    assert matcher.match("Abort, mission!") is None  # a clause break splits the phrase
    assert matcher.match("abort mission now") == "abort mission"
    assert matcher.match("stop") is None
    assert StopPhraseMatcher(max_words=3).match("could you please stop at the door") is None


def test_the_config_default_stop_phrases_are_the_matcher_defaults():
    from edgevox.config.schema import SafetyConfig
    from edgevox.voice.stop_phrases import DEFAULT_STOP_PHRASES

    assert tuple(SafetyConfig().stop_phrases) == DEFAULT_STOP_PHRASES


@pytest.mark.parametrize(
    "text",
    ["[" * 20000, "{" * 20000, "![" * 10000, " " * 20000 + ".", "1" * 20000, "1." * 10000, "a@b." * 5000, "<" * 20000],
)
def test_cleaning_a_huge_pathological_input_takes_milliseconds_not_minutes(text):
    """A 20,000-character line typed or emitted once made the cleaner run for 30-70 s (quadratic
    patterns) while the stdin reader - and so a typed "stop" behind it - waited."""
    import time

    started = time.perf_counter()
    clean_for_speech(text)
    assert time.perf_counter() - started < 1.0
