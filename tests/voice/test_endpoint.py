"""The text rule of adaptive endpointing: does a speculative transcript end mid-phrase? (table test)"""

from __future__ import annotations

import pytest

from edgevox.voice.endpoint import classify_ending, ends_mid_phrase

# (transcript as Whisper might write it, expected reason); reasons other than "complete" are incomplete.
CASES = [
    # complete requests, with and without Whisper's final punctuation
    ("Go forward ten meters.", "complete"),
    ("stop", "complete"),
    ("Bring me the red cup!", "complete"),
    ("What's the weather like?", "complete"),
    ("Is the garage door open?", "complete"),
    ("Pick it up.", "complete"),
    ("Turn the lights off", "complete"),
    ("Set a timer for 30 seconds.", "complete"),
    ("That's all.", "complete"),
    ("No.", "complete"),
    ("Thank you very much.", "complete"),
    ("What should I do?", "complete"),
    ("Dock at the charging station, please.", "complete"),
    # conjunctions
    ("Turn left and", "conjunction"),
    ("Turn left and.", "conjunction"),
    ("Clean the kitchen, but", "conjunction"),
    ("Wait here until", "conjunction"),
    ("Fetch the keys or", "conjunction"),
    ("Go upstairs because", "conjunction"),
    # prepositions, "to" included
    ("Move the box to", "preposition"),
    ("Set a timer for.", "preposition"),
    ("Put the cup next to the sink beside", "preposition"),
    ("Come in.", "complete"),  # particles that end phrasal verbs are not prepositions here
    ("Drive towards", "preposition"),
    ("Look behind", "preposition"),
    # articles and determiners
    ("Pick up the.", "determiner"),
    ("Bring me a", "determiner"),
    ("Open your", "determiner"),
    ("Water those", "determiner"),
    # auxiliaries and modal verbs
    ("The door is", "auxiliary"),
    ("Could you, um, can.", "auxiliary"),
    ("I think we should.", "auxiliary"),
    ("Let's", "auxiliary"),
    # numbers: a digit string or a count may go on
    ("Call five five", "number"),
    ("Set the volume to 7.", "number"),
    ("The code is 4 2 9", "number"),
    ("Go forward twenty", "number"),
    ("Room 3.5", "number"),
    # fillers
    ("Bring me, um", "filler"),
    ("Go to the uh.", "filler"),
    ("Hmm.", "filler"),
    # trailing punctuation that means "more to come"
    ("Go to the kitchen,", "trailing_punctuation"),
    ("Go to the kitchen...", "trailing_punctuation"),
    ("Go to the kitchen…", "trailing_punctuation"),
    ("Go to the kitchen -", "trailing_punctuation"),
    ("The list is:", "trailing_punctuation"),
    # nothing transcribed yet: no evidence the request is done
    ("", "empty"),
    ("   ", "empty"),
]


@pytest.mark.parametrize(("text", "reason"), CASES)
def test_ending_is_classified_by_the_category_of_the_last_word(text, reason):
    ending = classify_ending(text)
    assert ending.reason == reason
    assert ending.complete is (reason == "complete")
    assert ends_mid_phrase(text) is (reason != "complete")


def test_case_and_surrounding_whitespace_do_not_matter():
    assert ends_mid_phrase("  TURN LEFT AND  ")
    assert not ends_mid_phrase("  TURN LEFT  ")


def test_only_the_last_word_counts():
    assert not ends_mid_phrase("and then go to the kitchen")
    assert ends_mid_phrase("kitchen then the")
