"""Carrying things somewhere, locking and unlocking, phrasal verbs in docstrings, pronouns with
nothing to stand for, and answers that confirm a proposal by one of its values. Each test is one
principle of English or of the tool's schema."""

from __future__ import annotations

from typing import Annotated, Literal

import pytest

from edgevox.agents.llm_agent import LLMAgent
from edgevox.agents.resolver import SchemaResolver, spoken_name
from edgevox.agents.tools import tool
from edgevox.language.clauses import classify_clause
from edgevox.language.lexicon import motion_entailed
from edgevox.language.requests import pronoun_object, read_request
from edgevox.language.terms import bool_rule, sign_rule, stem
from edgevox.testing import ScriptedLLM

Place = Literal["lobby", "kitchen", "laundry", "pool"]


@tool
def go_to_room(room: int) -> str:
    """Drive to a guest room and wait at its door.

    Args:
        room: The room number, between 101 and 1299.
    """
    return "ok"


@tool
def go_to_place(place: Place) -> str:
    """Drive to a named place in the hotel."""
    return "ok"


@tool
def set_lid(opened: bool) -> str:
    """Open or lock the delivery compartment lid.

    Args:
        opened: True unlocks and opens the lid; False closes it and locks it.
    """
    return "ok"


@tool
def nudge(distance_m: float) -> str:
    """Move straight forward or backward a short distance.

    Args:
        distance_m: Distance in meters, between -2 and 2. Positive moves forward,
            negative backs up.
    """
    return "ok"


@tool
def dock() -> str:
    """Return to the charging dock and start charging."""
    return "ok"


HOTEL = SchemaResolver([go_to_room, go_to_place, set_lid, nudge, dock])


# -- docstrings ---------------------------------------------------------------------------


def test_verbs_coordinated_after_true_or_false_are_all_its_cues():
    rule = bool_rule("True unlocks and opens the lid; False closes it and locks it.")
    assert rule is not None
    assert rule.sign([stem("lock")]) == -1 and rule.sign([stem("unlock")]) == 1


def test_a_noun_after_and_is_no_second_predicate():
    rule = bool_rule("True opens the lid and the vent, false closes them.")
    assert rule is not None and stem("vent") not in rule.positive | rule.negative


def test_the_particle_of_a_phrasal_verb_made_of_a_direction_is_no_direction():
    # "backs up" is WordNet's back up, "move backwards": the "up" says no height
    rule = sign_rule("Positive moves forward, negative backs up.")
    assert rule is not None
    assert "up" not in rule.negative and stem("raise") not in rule.negative
    assert "back" in rule.negative and "forward" in rule.positive


@pytest.mark.parametrize(
    ("text", "call"),
    [("Lock the compartment.", ("set_lid", {"opened": False})), ("Unlock the lid.", ("set_lid", {"opened": True}))],
)
def test_a_boolean_is_set_by_the_verb_its_text_gives_each_value(text, call):
    p = HOTEL.propose(text)
    assert p.call == call and p.sure and p.clarify is None


# -- carrying, returning -------------------------------------------------------------------


def test_carrying_entails_the_doers_motion():
    assert motion_entailed("bring") == "come" and motion_entailed("take") == "come"
    assert motion_entailed("move") is None


@pytest.mark.parametrize("text", ["take this up to room 412", "bring the towels to room 412"])
def test_a_thing_carried_to_a_place_is_a_going_there_confirmed(text):
    assert "come" in {v.verb for v in read_request(text).verbs}
    p = HOTEL.propose(text)
    assert p.call == ("go_to_room", {"room": 412}) and p.clarify is not None  # near "go": asked


@pytest.mark.parametrize("text", ["take a photo", "walk to the pool", "take this"])
def test_no_motion_is_added_without_an_object_and_a_destination(text):
    assert "come" not in {v.verb for v in read_request(text).verbs}


def test_a_phrasal_verb_with_back_whose_first_sense_is_a_motion_is_a_return():
    assert "return" in {v.verb for v in read_request("take the rig back to the start mark").verbs}


def test_a_noun_compound_is_a_place_by_its_last_noun():
    # "the start mark": "start" alone is an act, the compound names a place
    assert "return" in {v.verb for v in read_request("bring the camera back to the start mark").verbs}
    assert "return" not in {v.verb for v in read_request("go back to idle").verbs}


@tool
def roll_camera(degrees: Annotated[float, "Roll in degrees, -30 to 30. Positive rolls clockwise."]) -> str:
    """Roll the camera sideways around the lens axis."""
    return "ok"


@tool
def tilt_head(degrees: Annotated[float, "Tilt in degrees, -45 to 45. Positive tilts up."]) -> str:
    """Tilt the head up or down."""
    return "ok"


def test_a_light_verb_with_a_particle_does_not_defer_to_its_object():
    # "bring ... back" is a phrasal verb with its own meaning: not "roll the camera"
    p = SchemaResolver([roll_camera, tilt_head]).propose("bring the camera back to one")
    assert p.clarify is not None


def test_a_verb_near_the_tools_with_a_choice_only_it_takes_is_sure():
    p = HOTEL.propose("head to the kitchen")
    assert p.call == ("go_to_place", {"place": "kitchen"}) and p.sure and p.clarify is None


def test_a_direction_said_as_a_particle_of_an_unknown_verb_names_no_tool():
    # "charge up": "up" is no direction of the nudge ("backs up" is not "up")
    p = HOTEL.propose("charge up")
    assert p.call is None


def test_the_part_a_plan_cannot_do_is_quoted_without_its_conjunction_and_stop():
    p = HOTEL.propose("go back to your dock and charge up.")
    assert p.plan == [("dock", {})] and p.clarify == "I can't do 'charge up'. Should I just dock?"


# -- pronouns ------------------------------------------------------------------------------


def test_a_pronoun_is_an_object_not_part_of_a_noun_compound():
    assert classify_clause("Turn it up a bit.").kind == "command"


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("turn it up a bit", "turn up"),
        ("switch that off", "switch off"),
        ("turn the fan up", None),
        ("bring me tea", None),
    ],
)
def test_a_pronoun_object_is_found_with_its_verb(text, said):
    assert pronoun_object(text) == said


def test_a_command_whose_only_object_is_a_pronoun_naming_no_tool_asks_what():
    p = HOTEL.propose("Turn it up a bit.")
    assert p.call is None and p.clarify == "What should I turn up?"


def test_an_article_opens_the_noun_after_a_preposition_in_a_tool_name():
    assert spoken_name("move_along_row") == "move along the row"
    assert spoken_name("go_to_room") == "go to room"


# -- answers that confirm ------------------------------------------------------------------


@tool
def move_along_row(distance_m: float) -> str:
    """Move the robot along the rail between the benches.

    Args:
        distance_m: How far to move, in meters. Positive moves forward; negative moves
            backward. Between -20 and 20.
    """
    return "ok"


@tool
def take_photo(bench: int) -> str:
    """Take a photo of one bench."""
    return "ok"


@pytest.mark.parametrize(("answer", "distance"), [("forward", 3), ("backward", -3)])
def test_a_distance_without_a_direction_is_asked_which_way_and_the_answer_completes_it(answer, distance):
    # positive is forward here, yet "go three meters" names no direction: asked, never assumed
    a = LLMAgent("bot", "A robot.", tools=[move_along_row, take_photo], llm=ScriptedLLM(default="Done."))
    assert a.run("Go three meters.").data["clarify"] == "Which way should I move along the row: forward or back?"
    done = a.run(answer)
    assert done.first_call is not None and done.first_call.arguments == {"distance_m": distance}


def test_an_answer_that_is_no_part_of_the_proposal_does_not_run_it():
    a = LLMAgent("bot", "A robot.", tools=[move_along_row, take_photo], llm=ScriptedLLM(default="Done."))
    a.run("Go three meters.")
    assert a.run("to bench two").first_call is None


@tool
def jog(distance_cm: Annotated[float, "centimetres; positive is forward, negative is backward"]) -> str:
    """Nudge the gantry a short distance along the rail. At most 100 cm either way."""
    return "ok"


@tool
def move_to_bed(bed: int) -> str:
    """Move the gantry over one bed, 1 to 12."""
    return "ok"


def test_a_direction_answering_a_proposal_made_by_its_unit_gives_that_tools_call():
    # "move" names neither tool; the unit fits only the jog, which way is not said: asked, and
    # "backwards" takes it up
    a = LLMAgent("bot", "A robot.", tools=[jog, move_to_bed], llm=ScriptedLLM(default="Done."))
    assert a.run("move 30 centimetres").data["clarify"] == "Which way should I jog: forward or back?"
    done = a.run("backwards")
    assert done.first_call is not None and done.first_call.arguments == {"distance_cm": -30}


# -- places no choice names; devices that sound; measures a no-argument tool would lose ------


@pytest.mark.parametrize(
    ("text", "place"),
    [
        ("go to the rooftop garden", "rooftop garden"),
        ("take us to the lighthouse", "lighthouse"),
        ("take this up to room four twelve", "room four twelve"),
        ("move to the left", None),  # a direction is no place
        ("go back to idle", None),  # a state is no place
    ],
)
def test_the_destination_of_a_motion_is_a_noun_phrase_naming_a_place(text, place):
    from edgevox.language.paths import destination

    assert destination(text) == place


def test_a_place_none_of_the_going_tools_choices_names_is_asked_with_the_choices():
    p = HOTEL.propose("take us to the lighthouse")
    assert p.clarify == "I can't go to the lighthouse. Which place: lobby, kitchen, laundry or pool?"
    assert p.call == ("go_to_place", {})


@tool
def set_siren(on: bool) -> str:
    """Turn the siren on or off."""
    return "ok"


@tool
def set_beacon(on: bool) -> str:
    """Switch the flashing beacon on or off."""
    return "ok"


@pytest.mark.parametrize(
    ("text", "call"),
    [
        ("sound the siren", ("set_siren", {"on": True})),
        ("flash the beacon", ("set_beacon", {"on": True})),
        ("silence the siren", ("set_siren", {"on": False})),
    ],
)
def test_making_a_device_sound_or_shine_switches_it_on(text, call):
    # WordNet: sound.v.02 and flash.v.01 are kinds of cause_to_be_perceived.v.01
    p = SchemaResolver([set_siren, set_beacon]).propose(text)
    assert p.call == call and p.sure


@tool
def change_depth(delta_m: float) -> str:
    """Dive deeper or rise toward the surface.

    A positive value goes deeper, a negative value rises. Moves are limited to 50 m at a time.

    Args:
        delta_m: change of depth in metres.
    """
    return "ok"


@tool
def surface() -> str:
    """Abort the dive and bring the vehicle back up to the surface."""
    return "ok"


def test_a_tool_that_takes_nothing_does_not_take_a_measure_said():
    r = SchemaResolver([change_depth, surface])
    p = r.propose("come up 5 metres")
    assert p.call == ("change_depth", {"delta_m": -5}) and p.clarify is not None  # "come up" only near: asked
    assert r.propose("come up").call == ("surface", {})


# -- rates written with a slash, numbers after "at", verbs that are adjectives ---------------


def test_a_slash_between_two_unit_symbols_is_per():
    from edgevox.language.terms import tokenize

    assert [w for w, _, _ in tokenize("6 km/h")] == ["6", "km", "per", "h"]
    assert [w for w, _, _ in tokenize("pan and/or tilt")] == ["pan", "and", "or", "tilt"]  # no units


def test_a_whole_spoken_number_after_at_with_a_unit_is_a_quantity_not_a_clock_time():
    from edgevox.language.clauses import deferral

    assert deferral("spray at three hundred litres a hectare".split()) == ""
    assert deferral("do it at six".split()) == "later"


@tool
def set_speed(speed_kmh: float) -> str:
    """Set the ground speed.

    Args:
        speed_kmh: Ground speed in km/h, 2 to 12.
    """
    return "ok"


@tool
def move_hitch(change_cm: int) -> str:
    """Raise or lower the hitch. Positive raises, negative lowers. At most 30 cm either way."""
    return "ok"


def test_a_rate_written_with_a_slash_is_that_rate():
    p = SchemaResolver([set_speed, move_hitch]).propose("set speed to 6 km/h")
    assert p.call == ("set_speed", {"speed_kmh": 6}) and p.sure and p.clarify is None


@pytest.mark.parametrize(("text", "args"), [("slow down", {}), ("slow down to five kph", {"speed_kmh": 5})])
def test_a_verb_that_is_an_adjective_changes_what_the_adjective_is_a_value_of(text, args):
    # WordNet's attribute: slow -> speed; "slow down" is no hitch move
    p = SchemaResolver([set_speed, move_hitch]).propose(text)
    assert p.call == ("set_speed", args) and p.clarify is not None


# -- signs named by their values, and signs nobody named -------------------------------------


@pytest.mark.parametrize(
    ("description", "negative", "positive"),
    [
        ("Tilt angle, -90 (looking down) to 90 (looking up).", "down", "up"),
        ("Steering angle; -30 is full left and 30 is full right.", "left", "right"),
    ],
)
def test_a_sign_convention_said_by_naming_signed_values(description, negative, positive):
    rule = sign_rule(description)
    assert rule is not None and negative in rule.negative and positive in rule.positive


def test_named_points_of_a_scale_without_negatives_are_no_sign_convention():
    assert sign_rule("0 (level) to 90 (straight up)") is None


@tool
def tilt_camera(degrees: Annotated[int, "Tilt angle, -90 (looking down) to 90 (looking up)."]) -> str:
    """Tilt the camera head."""
    return "ok"


@tool
def pan(degrees: Annotated[float, "Pan angle, -170 to 170."]) -> str:
    """Pan the head."""
    return "ok"


def test_a_direction_takes_the_sign_its_value_is_named_by():
    p = SchemaResolver([tilt_camera]).propose("tilt the camera down 30 degrees")
    assert p.call == ("tilt_camera", {"degrees": -30}) and p.clarify is None


def test_a_direction_said_for_a_signed_value_whose_sign_nobody_named_is_asked():
    r = SchemaResolver([pan])
    p = r.propose("pan left 30 degrees")
    assert p.call == ("pan", {}) and p.clarify is not None and "left is plus or minus" in p.clarify
    assert r.propose("pan to minus 30").call == ("pan", {"degrees": -30})  # a sign said is the value


@tool
def log_defect(kind: Literal["crack", "root_intrusion", "deposit"], note: str = "") -> str:
    """Record a defect at the crawler's current position."""
    return "ok"


def test_a_word_said_once_fills_one_parameter_not_also_a_free_text():
    p = SchemaResolver([log_defect]).propose("log a crack here")
    assert p.call == ("log_defect", {"kind": "crack"}) and p.sure
