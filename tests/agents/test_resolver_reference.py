"""Values a request gives by reference rather than as a number: the names a docstring gives
points of a scale ("0 is north, 90 east"), a pronoun that stands for what an earlier step named
("... then photograph *it*"), a unit that says which parameter a number is for, and a step that
asks to be told something. Each test is one principle of English or of the tool's schema."""

from __future__ import annotations

from typing import Annotated, Literal

import pytest

from edgevox.agents.resolver import SchemaResolver
from edgevox.agents.tools import tool
from edgevox.language.value_words import named_number, number_names


@pytest.mark.parametrize(
    ("text", "names"),
    [
        # a copula names a point, and the list it opens goes on naming
        ("Bearing, 0 to 359. 0 is north, 90 east, 180 south, 270 west.", {0: ["north"], 90: ["east"], 270: ["west"]}),
        # a gloss in parentheses names the number before it; a slash gives two names
        ("-20 (full reverse) to 80 (full forward). 0 is idle/neutral.", {-20: ["full", "revers"], 0: ["idl"]}),
        ("0 (silent) to 10 (loudest).", {0: ["silent"], 10: ["loudest"]}),
        # what a number does, when no object follows the verb: "straight ahead"
        ("0 faces straight ahead.", {0: ["straight", "ahead"]}),
    ],
)
def test_a_docstring_names_points_of_a_scale(text, names):
    got = number_names(text)
    for value, stems in names.items():
        assert frozenset(stems) in got[value], (value, got)


@pytest.mark.parametrize(
    "text",
    [
        "Distance in metres, between -10 and 10 (negative is backwards).",  # a remark, not a name
        "0 mutes the speaker.",  # a verb with its object: a word for the verb, not a name
        "Turn by at most 90 degrees either way.",  # a unit after a number is no name
        "Bed number, 1 to 12.",
    ],
)
def test_bounds_remarks_and_units_name_nothing(text):
    assert number_names(text) == {}


def test_a_name_is_said_in_full_and_only_one_number_is_named():
    names = number_names("-20 (full reverse) to 80 (full forward). 0 is idle.")
    assert named_number(names, ["full", "revers"]) == -20
    assert named_number(names, ["full"]) is None  # "full" alone: which end?
    assert named_number(names, ["idl", "full", "forward"]) is None  # two named: ask


@tool
def set_bearing(degrees: int) -> str:
    """Point the antenna at a compass bearing.

    Args:
        degrees: 0 to 359. 0 is north, 90 east, 180 south, 270 west.
    """
    return "ok"


@tool
def set_fan(speed_percent: int) -> str:
    """Set the cooling fan. 0 (off) to 100 (flat out)."""
    return "ok"


MAST = SchemaResolver([set_bearing, set_fan])


@pytest.mark.parametrize(
    ("text", "call"),
    [
        ("point the antenna west", ("set_bearing", {"degrees": 270})),
        ("set the bearing to south", ("set_bearing", {"degrees": 180})),
        ("set the bearing to one three five", ("set_bearing", {"degrees": 135})),  # digits one by one
        ("set the fan flat out", ("set_fan", {"speed_percent": 100})),
    ],
)
def test_a_named_point_is_a_value(text, call):
    p = MAST.propose(text)
    assert p.call == call and p.clarify is None, p


def test_a_named_point_without_the_tools_verb_is_asked_not_run():
    p = MAST.propose("flat out, please")  # neither its verb nor its object: asked, never run
    assert p.call is None or p.clarify is not None, p


@tool
def go_to_tank(tank: int) -> str:
    """Drive to a tank.

    Args:
        tank: Tank number, 1 to 9.
    """
    return "ok"


@tool
def sample(tank: int) -> str:
    """Take a water sample from a tank.

    Args:
        tank: Tank number, 1 to 9.
    """
    return "ok"


@tool
def fill(tank: int, litres: float = 5.0) -> str:
    """Fill a tank with fresh water.

    Args:
        tank: Tank number, 1 to 9.
        litres: How much, in litres, at most 20.
    """
    return "ok"


@tool
def read_level(tank: int) -> str:
    """Report the water level of a tank.

    Args:
        tank: Tank number, 1 to 9.
    """
    return "ok"


TANKS = SchemaResolver([go_to_tank, sample, fill, read_level])


def test_a_pronoun_in_a_later_step_stands_for_what_an_earlier_step_named():
    p = TANKS.propose("drive to tank 4 and then sample it")
    assert p.plan == [("go_to_tank", {"tank": 4}), ("sample", {"tank": 4})] and p.clarify is None, p


def test_without_a_pronoun_a_later_steps_missing_value_is_asked():
    p = TANKS.propose("drive to tank 4 and then take a sample")
    assert p.clarify is not None and "which tank" in p.clarify.lower(), p


def test_a_number_in_another_parameters_unit_leaves_the_first_missing():
    # 3 litres is no tank number: it is the litres', and the tank is asked
    p = TANKS.propose("fill it with 3 litres")
    assert p.call == ("fill", {"litres": 3}) and p.clarify is not None and "tank" in p.clarify.lower(), p


def test_a_step_that_asks_to_be_told_is_read_as_a_question():
    p = TANKS.propose("check the level in tank 2, then fill it with 3 litres")
    assert p.plan == [("read_level", {"tank": 2}), ("fill", {"tank": 2, "litres": 3})], p


@pytest.mark.parametrize(
    ("text", "values"),
    [("tank ten, five litres", [10, 5]), ("heading zero four five", [45])],
)
def test_numbers_said_one_after_another(text, values):
    from edgevox.language.numbers import find_numbers
    from edgevox.language.terms import tokenize

    assert [s.value for s in find_numbers([t for t, _, _ in tokenize(text)])] == values


# -- which parameter a number is for, and which tool takes it ----------------------------------


@tool
def aim(pan_deg: float = 0.0, tilt_deg: float = 0.0) -> str:
    """Pan and/or tilt the spotlight relative to where it points now.

    Args:
        pan_deg: Degrees to pan. Positive pans left, negative pans right.
        tilt_deg: Degrees to tilt. Positive tilts up, negative tilts down.
    """
    return "ok"


@tool
def play_sequence(first_cue: int, last_cue: int, seconds: float) -> str:
    """Play the light cues from one cue to another.

    Args:
        first_cue: Cue to start from, 1 to 40.
        last_cue: Cue to end at, 1 to 40.
        seconds: How long the whole sequence takes, in seconds.
    """
    return "ok"


LIGHTS = SchemaResolver([aim, play_sequence])


@pytest.mark.parametrize(
    ("text", "call"),
    [
        # a verb of the tool's summary that is a word of its name is its own verb ("and/or")
        ("tilt down twelve degrees", ("aim", {"tilt_deg": -12})),
        # the number after a parameter's name and the direction of the change is that parameter's
        ("pan right by 30", ("aim", {"pan_deg": -30})),
        # a range among other numbers: its ends by name
        (
            "play the sequence from cue three to cue nine over forty seconds",
            ("play_sequence", {"first_cue": 3, "last_cue": 9, "seconds": 40}),
        ),
    ],
)
def test_which_parameter_a_number_is_for(text, call):
    p = LIGHTS.propose(text)
    assert p.call == call and p.clarify is None, p


def test_a_verb_that_names_an_optional_number_asks_for_it():
    # by its default the tool would tilt by nothing: "tilt the spotlight" asks how far
    p = LIGHTS.propose("tilt the spotlight")
    assert p.call == ("aim", {}) and p.clarify == "How many degrees should I tilt?", p


@tool
def go_to_stall(stall: int) -> str:
    """Move the feeder to a stall.

    Args:
        stall: Stall number, 1 to 30.
    """
    return "ok"


@tool
def nudge(distance_cm: Annotated[float, "centimetres; positive is forward, negative is backward"]) -> str:
    """Nudge the feeder a short distance along its rail."""
    return "ok"


BARN = SchemaResolver([go_to_stall, nudge])


def test_a_unit_only_another_tool_takes_asks_about_that_tool():
    # "move" is go_to_stall's verb, but 40 centimetres is no stall number and nudge takes it
    p = BARN.propose("move 40 centimetres")
    assert p.call is not None and p.call[0] == "nudge" and p.clarify is not None, p


@tool
def bow(seconds: int = 2) -> str:
    """Bow to a guest.

    Args:
        seconds: how long to hold the bow; 1 to 5 seconds.
    """
    return "ok"


@tool
def wave() -> str:
    """Wave a hand at the guest."""
    return "ok"


HOST = SchemaResolver([bow, wave])


@pytest.mark.parametrize(
    ("text", "call"),
    [
        ("give them a wave", ("wave", {})),  # a light verb with the act as its noun: "wave"
        ("give a deep bow", ("bow", {})),
        ("make a bow for three seconds", ("bow", {"seconds": 3})),
    ],
)
def test_a_light_verb_with_the_tools_verb_as_its_noun_names_it(text, call):
    p = HOST.propose(text)
    assert p.call == call and p.clarify is None, p


def test_a_light_verb_with_another_noun_names_nothing():
    p = HOST.propose("give them a hand")
    assert p.call is None or p.clarify is not None, p


@tool
def patrol(route: Literal["perimeter", "lobby"]) -> str:
    """Patrol a route until told otherwise."""
    return "ok"


@tool
def set_patrol_speed(level: int) -> str:
    """Set the patrolling speed level, 1 to 5."""
    return "ok"


GUARD = SchemaResolver([patrol, set_patrol_speed])


@pytest.mark.parametrize("text", ["start patrolling the perimeter", "keep patrolling the perimeter"])
def test_an_aspectual_verb_with_a_gerund_says_the_gerunds_act(text):
    # "start *patrolling*": the act is patrol, not the "patrolling" of the speed tool's object
    p = GUARD.propose(text)
    assert p.call == ("patrol", {"route": "perimeter"}) and p.clarify is None, p


def test_an_aspectual_verb_with_a_gerund_asks_the_acts_missing_value():
    p = GUARD.propose("start patrolling")
    assert p.call == ("patrol", {}) and p.clarify is not None and "route" in p.clarify.lower(), p


@tool
def swivel(angle_deg: float) -> str:
    """Rotate the chair in place. Positive turns right, negative turns left."""
    return "ok"


@tool
def roll(meters: float) -> str:
    """Roll forward or back. Negative rolls backwards."""
    return "ok"


CHAIR = SchemaResolver([swivel, roll])


def test_turning_around_is_half_a_turn_and_asks_which_way():
    p = CHAIR.propose("turn around")
    assert p.call == ("swivel", {}) and p.clarify is not None and "left" in p.clarify, p
    assert CHAIR.propose("turn around to the left").call == ("swivel", {"angle_deg": -180})


def test_around_after_a_verb_that_does_not_rotate_is_no_half_turn():
    p = CHAIR.propose("look around")
    assert p.call is None or p.call[1].get("angle_deg") is None, p


@tool
def go_to(room: Literal["kitchen", "cafeteria", "lab"]) -> str:
    """Drive to a room."""
    return "ok"


@tool
def treat(mix: Literal["fungicide", "foliar_feed"], bed: int) -> str:
    """Spray a plant bed from one of the tanks.

    Args:
        mix: which tank.
        bed: Bed number, 1 to 12.
    """
    return "ok"


@tool
def escort(destination: Literal["kitchen", "cafeteria", "lab"], guest: str = "") -> str:
    """Guide a visitor to a room."""
    return "ok"


YARD = SchemaResolver([go_to, treat, escort])


def test_a_light_verbs_object_that_is_a_value_names_its_tool():
    # "do" says little; its object "a foliar feed" is a value only treat takes
    p = YARD.propose("could you do a foliar feed on bed 8")
    assert p.call == ("treat", {"mix": "foliar_feed", "bed": 8}) and p.clarify is None, p


def test_a_value_outside_the_light_verbs_object_names_nothing_by_it():
    # "take Priya to the cafeteria": Priya is the object; the room is where, and two tools go there
    p = YARD.propose("take Priya to the cafeteria")
    assert p.clarify is not None or not p.sure, p


@pytest.mark.parametrize(
    ("text", "expanded"),
    [
        ("the cafeteria's doing lasagne today", "the cafeteria is doing lasagne today"),
        ("the kitchen's a mess", "the kitchen is a mess"),
        ("go to the cafeteria's entrance", "go to the cafeterias entrance"),  # a possessive stays
        ("let's go", "lets go"),
    ],
)
def test_a_nouns_s_before_a_verb_or_determiner_is_is(text, expanded):
    from edgevox.language.words import words

    assert " ".join(words(text)) == expanded


def test_a_statement_with_a_contracted_is_acts_on_nothing():
    p = YARD.propose("the cafeteria's doing lasagne today")
    assert p.call is None or p.clarify is not None, p


@tool
def set_hatch(opening_percent: int) -> str:
    """Open or close the hatch. 0 is shut and 100 is wide open."""
    return "ok"


@tool
def nudge_hatch(degrees: float) -> str:
    """Move the hatch by an angle. Positive opens it, negative closes it."""
    return "ok"


def test_halfway_is_the_middle_of_a_scale_from_zero():
    p = SchemaResolver([set_hatch]).propose("open the hatch halfway")
    assert p.call == ("set_hatch", {"opening_percent": 50}) and p.clarify is None, p


def test_halfway_on_a_signed_change_says_no_value():
    p = SchemaResolver([nudge_hatch]).propose("open the hatch halfway")
    assert p.call is None or "degrees" not in p.call[1], p


@tool
def show_message(message: str) -> str:
    """Show a text message on the chest screen."""
    return "ok"


@tool
def set_display(mode: Literal["welcome", "map", "off"]) -> str:
    """Change what the chest screen shows."""
    return "ok"


def test_an_unquoted_object_of_show_is_no_text_to_show():
    # "show" reads ("show the map"); an object said without quotes describes, it is no message
    p = SchemaResolver([show_message, set_display]).propose("show this gentleman the way out")
    assert p.call is None or p.call[0] != "show_message" or p.clarify is not None, p


def test_a_quoted_text_is_one_object_of_its_clause():
    from edgevox.language.clauses import classify_clause

    # its own verb ("is served") is not the clause's: put *it* on your screen
    assert classify_clause('put "Lunch is served at noon" on your screen').kind == "command"


def test_a_quoted_text_is_a_value_for_the_tool_that_takes_free_text():
    # a quote is a text given: the tool that takes free text may act on it, whatever its verb
    p = SchemaResolver([show_message, set_display]).propose('put "Lunch is served at noon" on your screen')
    assert p.call == ("show_message", {"message": "Lunch is served at noon"}), p


@tool
def set_heading(degrees: int) -> str:
    """Steer to an absolute compass heading, 0 to 359."""
    return "ok"


@tool
def turn_boat(degrees: float) -> str:
    """Turn relative to the current heading. Positive turns to starboard, negative to port."""
    return "ok"


def test_a_word_a_sign_convention_names_as_a_direction_rules_out_tools_that_cannot_go_that_way():
    # "starboard" is no general direction; only turn_boat's sign convention names it
    helm = SchemaResolver([set_heading, turn_boat])
    p = helm.propose("bear thirty degrees to starboard")
    assert p.call == ("turn_boat", {"degrees": 30}), p
    p = helm.propose("come round to port by ninety degrees")
    assert p.call == ("turn_boat", {"degrees": -90}), p


@tool
def call_lift(floor: int) -> str:
    """Call the lift to a floor.

    Args:
        floor: Floor number, -2 (basement) to 5.
    """
    return "ok"


@tool
def move_mast(delta_cm: float) -> str:
    """Move the mast. Positive lifts it, negative lowers it."""
    return "ok"


def test_a_general_direction_word_said_as_a_noun_rules_no_tool_out():
    # "the lift" is a noun of general English, which move_mast's convention also uses: no cue
    p = SchemaResolver([call_lift, move_mast]).propose("please call the lift for floor minus two")
    assert p.call == ("call_lift", {"floor": -2}) and p.clarify is None, p


@tool
def angle_blade(angle_deg: float) -> str:
    """Angle the plough blade to throw snow to one side.

    Args:
        angle_deg: Blade angle in degrees, between -30 and 30. Positive angles the blade to the
            right, negative to the left, 0 is straight.
    """
    return "ok"


def test_a_verb_that_makes_a_points_name_gives_that_point():
    # "straighten": to make straight, and "0 is straight"
    p = SchemaResolver([angle_blade]).propose("straighten the blade")
    assert p.call == ("angle_blade", {"angle_deg": 0}), p


@tool
def water_bench(bench: int, litres: float = 2.0) -> str:
    """Water one bench.

    Args:
        bench: Bench number, 1 to 6.
        litres: How much water.
    """
    return "ok"


def test_two_numbers_joined_by_or_are_one_value_unsure_never_two_values():
    p = SchemaResolver([water_bench]).propose("water bench two or three")
    assert p.call is None or (p.clarify is not None and "bench" not in p.call[1]), p
    p = SchemaResolver([water_bench]).propose("water bench two with three litres")
    assert p.call == ("water_bench", {"bench": 2, "litres": 3}), p
