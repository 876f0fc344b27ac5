"""Chunker and stop-phrase rules (speech cleaning: test_speechtext.py)."""

from __future__ import annotations

import pytest

from edgevox.voice.chunker import Chunker, ChunkerSettings
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


def test_stop_phrases_in_other_languages_match_whole_words_in_any_script_and_respect_negation():
    from edgevox.voice.stop_phrases import StopPhraseMatcher, stop_phrases_for

    phrases, negations = stop_phrases_for("fr")
    french = StopPhraseMatcher(phrases, negations=negations)
    assert french.match("Arrête !") == "arrête" and french.match("Robot, arrêtez.") == "arrêtez"
    assert french.match("ne arrête pas") is None and french.match("arrêter la musique") is None
    phrases, negations = stop_phrases_for("de-AT")
    german = StopPhraseMatcher(phrases, negations=negations)
    assert german.match("Stopp!") == "stopp" and german.match("Bitte anhalten.") == "anhalten"
    assert german.match("nicht anhalten") is None
    assert StopPhraseMatcher(["止まれ"]).match("止まれ！") == "止まれ"
    with pytest.raises(ValueError, match="list them in safety.stop_phrases"):
        stop_phrases_for("ja")


@pytest.mark.parametrize(
    ("text", "phrase"),
    [
        ("Are stopping right now.", "stop"),  # Whisper's rendering of "Stop right now" over the robot
        ("It stops.", "stop"),
        ("Halting!", "halt"),
        ("freezes", "freeze"),
    ],
)
def test_a_tolerant_matcher_takes_a_stop_words_present_tense(text, phrase):
    assert StopPhraseMatcher().tolerant().match(text) == phrase
    assert StopPhraseMatcher().match(text) is None  # the plain matcher: whole words only


def test_a_tolerant_matcher_reports_the_phrase_as_configured():
    matcher = StopPhraseMatcher(("emergency stop", "halt")).tolerant()
    assert matcher.match("Emergency stopping!") == "emergency stop"
    assert matcher.match("the emergency is stopping") is None  # a phrase's words stay together


@pytest.mark.parametrize("text", ["Stopped.", "It stopped there.", "Froze.", "Not stopping.", "Don't stop.", "Stock."])
def test_a_tolerant_matcher_leaves_the_past_negations_and_near_words(text):
    """The past reports (and "Stopped." is the robot's own confirmation); negations still apply."""
    assert StopPhraseMatcher().tolerant().match(text) is None


def test_a_phrase_the_english_lexicon_does_not_know_as_a_verb_gets_no_other_forms():
    from edgevox.voice.stop_phrases import present_forms

    assert present_forms("stop") == {"stops", "stopping"}
    assert present_forms("anhalten") == frozenset() and present_forms("stopp") == frozenset()
    german = StopPhraseMatcher(("stopp", "anhalten"), negations=("nicht",)).tolerant()
    assert german.match("Sofort anhalten!") == "anhalten" and german.match("anhaltens") is None
    assert german.phrases == ("stopp", "anhalten") and german.tolerant_forms
