"""What a command clause says (``edgevox.language.requests``), one principle a row."""

from __future__ import annotations

import pytest

from edgevox.language.requests import directions_in, object_phrase, read_request, strip_conjunction

VERBS = [
    ("could you please take off", ["take off"]),
    ("back up half a metre", ["back up", "move"]),  # a direction said as a verb is a move
    ("turn the lights off", ["turn off"]),  # a particle after the object
    ("come on back home", ["come on", "come back", "come", "return"]),  # "back" before a place: a return
    ("head back to your charger", ["head back", "head", "return"]),
    ("park yourself back at the dock", ["park back", "park"]),  # no verb of motion: no return
    ("go wash the atrium glass", ["go", "wash"]),  # "go" + a bare verb: that verb is the act
    ("let it down two metres", ["let down"]),  # "let" with a particle is a phrasal verb (WordNet: lower)
    ("let me know", ["know"]),  # ... without one it carries the request
    ("ok, go park yourself", ["go", "park"]),  # ... also where the tagger read it as a noun
    ("alright mate, park yourself", ["park"]),  # the one spoken to is no verb
    ("pan left 20 degrees", ["pan"]),  # "left" is a direction, not a form of "leave"
    ("I want you to land now", ["land"]),  # "want" carries the request
    ("lower the arm by five centimetres", ["lower"]),  # an imperative the tagger may read as an adjective
    ("switch the bedroom lights off", ["switch off"]),  # on/off after the object is the verb's particle
    ("put it on the table", ["put"]),  # ... unless it opens a phrase of its own
    ("turn the volume down to a quarter", ["turn down"]),  # down to an amount: a level, no path
    ("pop down to the cafeteria", ["pop down", "pop"]),  # down to a place: the path of a motion
]


@pytest.mark.parametrize(("text", "verbs"), VERBS)
def test_the_verbs_of_a_request_with_their_particles(text, verbs):
    assert [v.text for v in read_request(text).verbs] == verbs


def test_a_word_with_a_determiner_is_a_noun_whatever_the_tagger_said():
    # en_core_web_sm tags "pump" here as a verb; "the" before it makes it the object
    assert {"bilge", "pump"} <= read_request("activate the bilge pump").nouns
    # a noun before a noun that the tagger read as an adjective is still a noun; a direction is not
    assert "joint" in read_request("tell me the joint angles").nouns
    assert "left" not in read_request("pour it into the left glass").nouns


def test_nouns_exclude_units_and_amounts_and_questions_ask_for_attributes():
    assert read_request("climb to ten metres").nouns == frozenset()
    assert read_request("fly up a bit").nouns == frozenset()
    assert "location" in read_request("where are you right now").nouns
    assert "height" in read_request("how high are we").nouns
    assert "recording" in read_request("stop recording").nouns  # the activity is the object


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("pick up the red cup please", "red cup"),
        ("add eggs to the shopping list", "eggs"),
        ("say good morning", "good morning"),
        ("announce that dinner is ready", "dinner is ready"),
        ("please pick up the book", "book"),  # an object follows its verb: "please" is politeness
        ("bring me to the kitchen", None),  # a pronoun names nothing
        ("drive two metres", None),  # a measure, not an object
    ],
)
def test_the_object_phrase_is_the_verbs_object_without_its_determiner(text, value):
    assert object_phrase(text) == value


def test_conjunctions_and_direction_context():
    assert strip_conjunction("and then land") == "land"
    assert directions_in("back up and turn left") == "back left"  # "up" of "back up" belongs to "back"


def test_left_after_be_or_have_is_what_remains_not_a_direction():
    asked = read_request("how much gin is left?")
    assert [v.verb for v in asked.verbs] == ["leave"] and not asked.directions
    assert read_request("turn left").directions == frozenset({"left"})
    assert read_request("what do you have left").directions == frozenset()


def test_a_particle_on_the_path_to_a_destination_is_no_direction_of_the_motion():
    assert read_request("pop down to the cafeteria").directions == frozenset()
    assert read_request("move down two metres").directions == frozenset({"down"})
