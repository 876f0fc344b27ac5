"""Rules of the schema resolver added for tool sets nobody tuned on: each row is one
principle of English or of the tool's schema, on a small tool set of its own."""

from __future__ import annotations

from typing import Annotated, Literal

import pytest

from edgevox.agents.decoders import Clarifications, Decision, SchemaFirstDecoder
from edgevox.agents.llm_agent import LLMAgent
from edgevox.agents.resolver import VALUES_FIT, SchemaResolver
from edgevox.agents.tools import ToolCall, tool
from edgevox.language.requests import has_subject
from edgevox.runtime.context import AgentContext
from edgevox.testing import ScriptedLLM


@tool
def pan(degrees: float) -> str:
    """Pan the camera head horizontally. Positive pans right, negative pans left.

    Args:
        degrees: relative angle, at most 170 either way.
    """
    return "panned"


@tool
def tilt(degrees: float) -> str:
    """Tilt the camera up or down. Positive tilts up, negative tilts down.

    Args:
        degrees: relative angle, between -30 and 90.
    """
    return "tilted"


@tool
def take_snapshot(count: int = 1) -> str:
    """Save still photos of the current view."""
    return "saved"


@tool
def spot_clean(radius_cm: float = 50) -> str:
    """Do an intensive spiral clean around where the robot is now.

    Args:
        radius_cm: radius in centimetres, between 20 and 150.
    """
    return "spot cleaning"


@tool
def set_do_not_disturb(enabled: bool) -> str:
    """Turn do-not-disturb on or off."""
    return "ok"


@tool
def clean_room(room: Literal["kitchen", "bedroom", "hallway"], mode: Literal["vacuum", "mop"] = "vacuum") -> str:
    """Clean one room."""
    return "cleaning"


@tool
def play_game(move: Literal["rock", "paper", "scissors"]) -> str:
    """Play rock paper scissors."""
    return "played"


@tool
def drive(
    distance_m: Annotated[float, "how far in metres, at most 5 either way; negative reverses"],
    speed_mps: Annotated[float, "speed in metres per second, between 0.1 and 1.2"] = 0.5,
) -> str:
    """Drive straight forward or backward."""
    return "drove"


@tool
def fly(direction: Literal["forward", "backward", "left", "right"], distance: float) -> str:
    """Fly horizontally.

    Args:
        direction: which way to fly.
        distance: how far, in meters.
    """
    return "flew"


@tool
def change_altitude(meters: float) -> str:
    """Climb or descend. Positive climbs, negative descends.

    Args:
        meters: how far, in meters.
    """
    return "changed"


@tool
def rotate(degrees: float) -> str:
    """Rotate in place. Positive turns right (clockwise), negative turns left.

    Args:
        degrees: angle in degrees.
    """
    return "rotated"


CAMERA = SchemaResolver([pan, tilt, take_snapshot])
VACUUM = SchemaResolver([spot_clean, set_do_not_disturb, clean_room, play_game, drive])
DRONE = SchemaResolver([fly, change_altitude, rotate])


@pytest.mark.parametrize(
    ("resolver", "text", "call"),
    [
        # The tool's name said as a phrase names it; an adjective may stand inside.
        (VACUUM, "do a little spot clean", ("spot_clean", {})),
        # A light verb is no noun made a verb: "do" never names set_do_not_disturb.
        (VACUUM, "do a little spot clean, thirty centimetre radius", ("spot_clean", {"radius_cm": 30})),
        # A verb naming a value of one choice with an object naming a value of another.
        (VACUUM, "mop the kitchen", ("clean_room", {"room": "kitchen", "mode": "mop"})),
        # ... also a WordNet synonym of the value, and a verb the general lexicon does not know.
        (VACUUM, "hoover the bedroom", ("clean_room", {"room": "bedroom"})),
        # A number goes to the parameter measured in its unit.
        (VACUUM, "drive forward two metres at one metre per second", ("drive", {"distance_m": 2, "speed_mps": 1})),
    ],
)
def test_the_request_names_the_tool_and_acts(resolver, text, call):
    p = resolver.propose(text)
    assert p.call == call and p.sure and p.clarify is None, p


def test_a_value_verb_without_a_second_value_names_no_tool():
    p = VACUUM.propose("rock please")  # "rock" is a move of the game, but nothing else is said
    assert p.call is None or p.clarify is not None


def test_values_only_one_tool_takes_are_confirmed_not_acted_on():
    # "nudge" names nothing; "down" and degrees fit the tilt only (the pan goes left or right)
    p = CAMERA.propose("could you nudge it down by five degrees")
    assert p.call == ("tilt", {"degrees": -5}) and p.reason == VALUES_FIT and p.clarify.startswith("Did you mean")
    p = DRONE.propose("slide over to the right 3 meters")
    assert p.call == ("fly", {"direction": "right", "distance": 3}) and p.clarify.startswith("Did you mean")


def test_a_direction_said_in_other_words_of_its_group_is_understood():
    p = DRONE.propose("go back a few")  # "back" is a word of "backward"; "a few" is no value
    assert p.call == ("fly", {"direction": "backward"}) and p.missing["fly"] == ["distance"], p


def test_a_near_verb_with_a_direction_and_unit_only_one_tool_takes_acts():
    p = DRONE.propose("turn left ninety degrees")
    assert p.call == ("rotate", {"degrees": -90}) and p.sure and p.clarify is None, p


def test_a_number_in_the_tools_unit_is_evidence_even_out_of_bounds():
    p = CAMERA.propose("spin it five hundred degrees to the right")
    assert p.call is not None and p.call[0] == "pan" and "out of bounds" in p.reason and p.clarify


def test_a_verb_alone_asks_an_open_question_and_the_answer_completes_the_request():
    p = DRONE.propose("turn")
    assert p.call is None and p.open_question and p.clarify.startswith("What should I do:")
    agent = LLMAgent("drone", "a drone", tools=[fly, change_altitude, rotate], llm=ScriptedLLM(default="Okay."))
    agent.decoder = SchemaFirstDecoder()
    ctx = AgentContext(session_id="s")
    asked = agent.run("turn", ctx)
    assert asked.first_call is None and asked.data["clarify"]
    done = agent.run("left, ninety degrees", ctx)
    assert done.first_call is not None and (done.first_call.name, done.first_call.arguments) == (
        "rotate",
        {"degrees": -90},
    )


def test_an_open_question_is_not_answered_by_yes_or_a_question():
    store = Clarifications()
    store.ask("s", Decision(None, clarify="What should I do: fly or rotate?"), "turn")
    assert store.answer("s", "yes", [fly, rotate]).kind == "none"
    store.ask("s", Decision(None, clarify="What should I do: fly or rotate?"), "turn")
    assert store.answer("s", "what can you do?", [fly, rotate]).kind == "none"
    store.ask("s", Decision(None, clarify="What should I do: fly or rotate?"), "turn")
    answer = store.answer("s", "left, ninety degrees", [fly, rotate])
    assert answer.kind == "restate" and answer.text == "turn left, ninety degrees"


def test_an_answer_replaces_a_value_out_of_bounds():
    p = CAMERA.propose("tilt up a hundred degrees")
    assert p.missing["tilt"] == ["degrees"] and "out of bounds" in p.reason
    store = Clarifications()
    store.ask("s", Decision(None, clarify=p.clarify, proposed=ToolCall("tilt", {}), missing=("degrees",)), p.reason)
    answer = store.answer("s", "as far up as it'll go then", [pan, tilt, take_snapshot])
    assert answer.kind == "execute" and answer.call.arguments == {"degrees": 90}


def test_only_the_main_clause_has_the_subject_of_a_remark():
    assert has_subject("my friend set a timer for five minutes")
    assert not has_subject("as far up as it'll go then")  # "it" is the subject of a comparative clause


@pytest.mark.parametrize("text", ["just one full turn to the left", "a half turn to the right"])
def test_a_word_after_a_determiner_is_a_noun_not_a_past_tense(text):
    from edgevox.language.intent import analyze

    assert analyze(text).kind == "command"  # "the left" is a side, not "left" the past of "leave"


def test_a_dictionary_genus_relates_a_verb_of_few_senses_to_the_verb_that_defines_it():
    from edgevox.language.lexicon import Relation, genus, relation

    assert relation("head", "go", "v") == Relation.NEAR  # "head": "to go or travel towards"
    assert relation("grab", "take", "v") == Relation.NEAR  # "grab": "take hold of ..."
    assert genus("take") == frozenset()  # 42 senses: no genus worth trusting
    assert relation("raise", "lower", "v") == Relation.NONE


def test_a_kind_of_the_tools_object_names_it_weakly_and_is_confirmed():
    p = CAMERA.propose("take a picture")  # a snapshot is a kind of picture
    assert p.call == ("take_snapshot", {}) and p.clarify == "Did you mean take the snapshot?"


def test_a_particle_before_a_destination_is_the_path_not_a_phrasal_verb():
    from edgevox.language.requests import read_request

    assert "head" in [v.text for v in read_request("head over to dock two").verbs]
    assert [v.text for v in read_request("come on back home").verbs] == ["come on", "come back", "come", "return"]


def test_right_before_an_adverb_of_time_or_place_is_no_direction():
    from edgevox.language.requests import read_request

    assert read_request("land right now").directions == frozenset()
    assert read_request("turn right now").directions == frozenset()  # "right now": when, not where
    assert read_request("turn right at the door").directions == frozenset({"right"})


def test_a_verbless_question_after_a_command_hedges_its_value():
    p = CAMERA.propose("could you swing the camera over to the right a bit, like twenty degrees?")
    assert p.call == ("pan", {"degrees": 20}) and p.clarify.startswith("Did you mean")


def test_a_spatial_direction_rules_out_a_tool_that_cannot_go_that_way_but_up_is_also_more():
    @tool
    def go_to_preset(spot: Literal["front_door", "garage"]) -> str:
        """Swing the camera to one of the saved viewing positions."""
        return "ok"

    @tool
    def set_volume(level: int) -> str:
        """Set the speaker volume, 0 to 100 percent."""
        return "ok"

    r = SchemaResolver([go_to_preset, pan, set_volume])
    assert r.propose("swing the camera to the right twenty degrees").call[0] == "pan"
    p = r.propose("crank the volume up to 150")  # "up" is more of the volume: out of bounds, asked
    assert p.call == ("set_volume", {}) and "out of bounds" in p.reason


def test_a_word_several_values_share_names_the_parameter_and_asks_which():
    @tool
    def go_to(destination: Literal["aisle A", "aisle B", "dock 1"]) -> str:
        """Navigate to a named spot."""
        return "ok"

    p = SchemaResolver([go_to, pan]).propose("head to the aisle")
    assert p.call == ("go_to", {}) and p.clarify.startswith("Which destination")


@pytest.mark.parametrize("text", ["how do you empty the bin?", "how does one reset you?"])
def test_how_something_is_done_is_no_question_to_a_reading_tool(text):
    from edgevox.language.intent import analyze

    intent = analyze(text)
    assert intent.kind == "question" and not intent.may_query


def test_a_phrasal_verb_names_the_tool_whose_docstring_names_its_act_as_a_noun():
    @tool
    def power_down() -> str:
        """Privacy shutdown: stop streaming and cut power to the head."""
        return "off"

    p = SchemaResolver([power_down, pan, tilt]).propose("shut the camera down")
    assert p.call == ("power_down", {}) and p.clarify == "Did you mean power down?"  # drastic: confirmed


def test_go_and_another_verb_is_one_request():
    @tool
    def go_to(destination: Literal["lab", "charging_dock"]) -> str:
        """Go to a named place."""
        return "ok"

    p = SchemaResolver([go_to, pan]).propose("go and charge yourself")
    assert p.call == ("go_to", {"destination": "charging_dock"}) and p.sure and p.clarify is None


def test_a_direction_no_tool_takes_still_asks_the_tool_the_verb_names():
    @tool
    def move_gripper(axis: Literal["x", "z"], distance_cm: float) -> str:
        """Move the gripper along one axis. x is toward the front, z is up.

        Args:
            axis: x or z.
            distance_cm: distance in centimetres; negative moves the opposite way.
        """
        return "ok"

    p = SchemaResolver([move_gripper, take_snapshot]).propose("move the gripper left ten centimetres")
    assert p.call is not None and p.call[0] == "move_gripper" and p.clarify  # asked, not acted on


def test_a_boolean_reads_its_on_off_word_not_the_verb_that_goes_both_ways():
    from edgevox.language.terms import bool_rule

    rule = bool_rule("True spins the blade up, False switches it off.")
    assert rule is not None and "switch" not in rule.negative and "off" in rule.negative

    @tool
    def set_blade(on: bool) -> str:
        """Switch the cutting blade on or off.

        Args:
            on: True spins the blade up, False switches it off.
        """
        return "ok"

    assert SchemaResolver([set_blade]).propose("switch the blade on").call == ("set_blade", {"on": True})


def test_a_command_names_a_reading_tool_only_by_its_own_verb():
    @tool
    def get_sample_inventory() -> str:
        """List which sample jars are filled and which are still empty."""
        return "jars"

    @tool
    def collect_sample(jar: int) -> str:
        """Collect a sediment sample into one of the sample jars."""
        return "ok"

    p = SchemaResolver([get_sample_inventory, collect_sample]).propose("fill jar number two with sediment")
    assert p.call is None or p.call[0] != "get_sample_inventory" or p.clarify


def test_a_longer_value_hinted_by_a_word_said_makes_the_value_a_question():
    @tool
    def operate_claw(position: Literal["open", "half_open", "closed"]) -> str:
        """Open or close the claw."""
        return "ok"

    r = SchemaResolver([operate_claw])
    assert r.propose("open the claw").call == ("operate_claw", {"position": "open"})
    p = r.propose("open the claw halfway")
    assert p.call == ("operate_claw", {}) and p.clarify == "Which position: open, half open or closed?"
    assert r.propose("open the claw half open").call == ("operate_claw", {"position": "half_open"})


def test_a_word_glossed_by_a_direction_in_parentheses_is_that_direction():
    from edgevox.language.terms import sign_rule

    rule = sign_rule("Positive turns to starboard (right), negative to port (left).")
    assert rule is not None and "port" in rule.negative and "starboard" in rule.positive


def test_a_verb_the_docstring_gives_a_number_names_that_number():
    @tool
    def set_volume(level: int) -> str:
        """Set the speaker volume between 0 and 100; 0 mutes the speaker."""
        return "ok"

    p = SchemaResolver([set_volume]).propose("mute yourself please")
    assert p.call == ("set_volume", {"level": 0}) and p.clarify  # another verb of its docstring: confirmed


def test_a_number_word_is_no_past_tense():
    from edgevox.language.intent import analyze

    assert analyze("a hundred then").kind != "report"


def test_on_or_off_after_the_object_are_the_verbs_particles():
    @tool
    def set_camera(on: bool) -> str:
        """Turn the camera on or off."""
        return "ok"

    @tool
    def rotate_base(angle_deg: float) -> str:
        """Rotate the robot in place; positive is clockwise (to the right)."""
        return "ok"

    r = SchemaResolver([set_camera, rotate_base])
    assert r.propose("turn the camera off").call == ("set_camera", {"on": False})
    p = r.propose("turn around")  # "turn around" is no "turn on": the camera is never asked about
    assert p.call is None or p.call[0] != "set_camera"


def test_go_and_a_verb_that_names_a_tool_is_that_verb():
    @tool
    def mow_zone(zone: Literal["front_lawn", "back_lawn"]) -> str:
        """Mow one zone of the garden."""
        return "ok"

    @tool
    def drive(distance_m: float) -> str:
        """Drive forward or back. Negative reverses."""
        return "ok"

    p = SchemaResolver([mow_zone, drive]).propose("go and mow the back lawn")
    assert p.call == ("mow_zone", {"zone": "back_lawn"}) and p.clarify is None


def test_a_value_only_one_tool_takes_is_confirmed_when_no_word_names_a_tool():
    @tool
    def set_pattern(pattern: Literal["stripes", "spiral"]) -> str:
        """Set the mowing pattern."""
        return "ok"

    r = SchemaResolver([set_pattern, pan])
    p = r.propose("let's go with spiral please")
    assert p.call == ("set_pattern", {"pattern": "spiral"}) and p.clarify.startswith("Did you mean")
    assert r.propose("spiral please").clarify is None or r.propose("spiral please").call is None


def test_a_reading_tool_that_reports_where_answers_where_questions():
    @tool
    def get_status() -> str:
        """Report the mower's battery charge, where it is and whether it is docked."""
        return "ok"

    r = SchemaResolver([get_status, pan])
    assert r.propose("where are you right now?").call == ("get_status", {})


def test_a_summary_that_opens_with_a_label_and_a_colon_is_read_after_the_colon():
    @tool
    def all_stop() -> str:
        """Emergency all stop: cut power to every thruster and hold position."""
        return "stopped"

    p = SchemaResolver([all_stop, pan]).propose("cut the thrusters")
    assert p.call == ("all_stop", {}) and p.sure and p.clarify is None  # its own verb, said as it is


# -- rules found by the held-out halves (each failure was a wrong action) -------------------


def test_two_values_for_one_choice_are_asked_not_one_picked():
    p = VACUUM.propose("clean the kitchen and the bedroom")
    assert p.call is None or "room" not in p.call[1] or p.clarify  # never one of the two, silently


def test_a_verbless_part_after_then_is_a_next_step_with_the_same_verb():
    @tool
    def go_to(destination: Literal["lab", "reception"]) -> str:
        """Go to a named place."""
        return "ok"

    p = SchemaResolver([go_to, pan]).propose("go to the lab first, then on to reception")
    assert p.plan == [("go_to", {"destination": "lab"}), ("go_to", {"destination": "reception"})]


def test_a_value_named_only_by_its_docstring_description_is_confirmed():
    @tool
    def go_to_room(room: Literal["reception", "lab"]) -> str:
        """Drive to a room.

        Args:
            room: reception is the front desk by the entrance.
        """
        return "ok"

    p = SchemaResolver([go_to_room, pan]).propose("go over to my desk")
    assert p.call == ("go_to_room", {"room": "reception"}) and p.clarify.startswith("Did you mean")


def test_metres_then_a_number_are_metres_and_centimetres():
    from edgevox.language.numbers import find_numbers

    assert [n.value for n in find_numbers("to one metre twenty".split())] == [pytest.approx(1.2)]
    assert [n.value for n in find_numbers("drive two metres twenty times".split())] == [2, 20]


def test_a_question_asking_what_should_be_done_is_advice_not_state():
    from edgevox.language.intent import analyze

    intent = analyze("how tall should grass be kept in summer?")
    assert intent.kind == "question" and not intent.may_query


def test_the_particle_of_back_up_is_no_direction_of_its_own():
    from edgevox.language.requests import read_request

    assert read_request("back up 2 metres").directions == frozenset({"back"})
    p = DRONE.propose("back up 2 metres")  # "up" would have made the altitude a candidate
    assert p.call == ("fly", {"direction": "backward", "distance": 2}) and p.sure and p.clarify is None


def test_an_object_only_another_tool_has_makes_the_verb_unsure():
    @tool
    def operate_claw(position: Literal["open", "closed"]) -> str:
        """Open or close the manipulator claw."""
        return "ok"

    @tool
    def all_stop() -> str:
        """Emergency all stop: cut power to every thruster and hold position."""
        return "ok"

    p = SchemaResolver([operate_claw, all_stop]).propose("shut down every thruster right now")
    assert p.clarify is not None  # "shut down" ~ close, but the thrusters are not the claw's


def test_a_reading_tool_named_by_its_verb_reads_only_what_it_reports():
    @tool
    def get_arm_status() -> str:
        """Tell what the arm is holding and its gripper height."""
        return "ok"

    r = SchemaResolver([get_arm_status, pan])
    assert r.propose("tell me a joke about a bartender").call is None  # a joke is not what it reports
    assert r.propose("tell me what the arm is holding").call == ("get_arm_status", {})
