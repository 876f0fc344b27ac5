"""What a request means beyond its words' spelling: switching a device on or off by what the verb
means, a level that implies "on", adverbs and their adjectives, verbs made from a tool's object,
numbers that are part of a name. Each test is one principle of English (WordNet's senses,
derivations and pertainyms) or of the tool's schema."""

from __future__ import annotations

from typing import Annotated, Literal

import pytest

from edgevox.agents.resolver import SchemaResolver, spoken_name
from edgevox.agents.tools import tool
from edgevox.language.lexicon import switch_polarity


@tool
def set_beacon(on: bool, brightness: Annotated[int, "Brightness in percent, 10 to 100."] = 100) -> str:
    """Switch the rooftop beacon on or off and set how bright it is."""
    return "ok"


@tool
def set_pump(enabled: bool) -> str:
    """Run or idle the bilge pump."""
    return "ok"


@tool
def raise_mast(height_cm: float) -> str:
    """Raise or lower the camera mast, in centimetres."""
    return "ok"


BOAT = SchemaResolver([set_beacon, set_pump, raise_mast])


@pytest.mark.parametrize(
    ("verb", "polarity"),
    [
        ("kill", False),  # "end or extinguish by forceful means"
        ("extinguish", False),
        ("silence", False),
        ("deactivate", False),
        ("activate", True),
        ("ignite", True),
        ("start", True),
        ("move", None),  # says nothing of on or off
        ("turn", None),  # goes both ways: its particle decides
        ("set", None),
    ],
)
def test_a_verbs_senses_say_whether_it_switches_on_or_off(verb, polarity):
    assert switch_polarity(verb) is polarity


@pytest.mark.parametrize(
    ("text", "call"),
    [
        ("kill the beacon", ("set_beacon", {"on": False})),
        ("activate the bilge pump", ("set_pump", {"enabled": True})),
        ("deactivate the pump", ("set_pump", {"enabled": False})),
    ],
)
def test_a_verb_that_means_switching_said_of_the_tools_object_acts(text, call):
    p = BOAT.propose(text)
    assert p.call == call and p.clarify is None, p


def test_a_positive_level_of_a_switched_device_means_it_is_on():
    p = BOAT.propose("dim the beacon to thirty percent")
    assert p.call == ("set_beacon", {"brightness": 30, "on": True}), p


def test_a_level_of_zero_or_a_verb_that_says_nothing_leaves_on_or_off_asked():
    for text in ("move the beacon", "set the beacon brightness to zero", "do something with the beacon"):
        p = BOAT.propose(text)
        assert p.call is None or "on" not in p.call[1], (text, p)


def test_a_negated_switching_verb_does_nothing():
    assert BOAT.propose("don't kill the beacon").call is None


@pytest.mark.parametrize(
    ("name", "spoken"),
    [
        ("set_timer", "set the timer"),
        ("emergency_stop", "emergency stop"),
        ("go_to", "go to"),
        ("take_off", "take off"),
    ],
)
def test_a_tool_name_is_said_as_a_verb_phrase_only_when_it_opens_with_a_verb(name, spoken):
    assert spoken_name(name) == spoken


# -- words of a request that say how, and verbs made from a tool's object --------------------


@tool
def start_recording(minutes: Annotated[int, "How long to record, 1 to 60 minutes."] = 10) -> str:
    """Start recording video."""
    return "recording"


@tool
def stop_recording() -> str:
    """Stop recording video."""
    return "stopped"


@tool
def drive(meters: float, speed: Literal["slow", "normal", "fast"] = "normal") -> str:
    """Drive forward or backward. Positive drives forward, negative reverses."""
    return "drove"


@tool
def pick_up(item: Literal["glass", "bowl"], gentle: bool = False) -> str:
    """Pick up an item from the counter."""
    return "holding"


@tool
def pour(bottle: Literal["gin", "tonic"], volume_ml: int, into: Literal["shaker", "glass"] = "shaker") -> str:
    """Pour a measured amount from a bottle, in millilitres."""
    return "poured"


@tool
def park_arm() -> str:
    """Close the bar: dump the shaker and fold the arm into its parked position."""
    return "parked"


CAMERA = SchemaResolver([start_recording, stop_recording])
CART = SchemaResolver([drive, pick_up])
BAR = SchemaResolver([pour, park_arm])


def test_the_verb_a_tools_object_is_the_act_of_names_the_tool_that_starts_it_not_the_one_that_stops_it():
    p = CAMERA.propose("record for five minutes")
    assert p.call == ("start_recording", {"minutes": 5}), p


def test_an_adverb_says_what_its_adjective_says():
    assert CART.propose("drive forward two metres slowly").call == ("drive", {"meters": 2, "speed": "slow"})
    assert CART.propose("pick up the glass gently").call == ("pick_up", {"item": "glass", "gentle": True})


def test_an_object_that_is_a_value_given_to_the_tool_is_no_object_of_another_tool():
    p = BAR.propose("pour 30 ml of gin into the shaker")  # the shaker is where to pour, not park_arm's
    assert p.call == ("pour", {"bottle": "gin", "volume_ml": 30, "into": "shaker"}) and p.clarify is None, p


def test_a_light_verb_is_not_near_a_content_verb_through_one_of_its_many_senses():
    p = BAR.propose("put 30 ml of gin in the shaker")  # "put" ~ "park" in one sense: no name
    assert p.call is None or p.call[0] != "park_arm", p


@tool
def go_to(destination: Literal["dock 1", "dock 2", "aisle B"]) -> str:
    """Go to a named place in the warehouse."""
    return "arrived"


@tool
def drive_straight(meters: float) -> str:
    """Drive straight. Positive drives forward, negative reverses."""
    return "drove"


YARD = SchemaResolver([go_to, drive_straight])


def test_a_number_that_is_part_of_a_name_is_no_amount():
    p = YARD.propose("drive straight to dock 2")  # "2" names the dock: no two metres
    assert p.call is None or p.call[0] != "drive_straight" or "meters" not in p.call[1], p


def test_a_place_only_another_tool_takes_asks_whether_that_tool_was_meant():
    p = YARD.propose("drive straight over to aisle B")
    assert p.call == ("go_to", {"destination": "aisle B"}) and p.clarify == "Did you mean go to aisle B?", p


@tool
def emergency_stop() -> str:
    """Stop all motors at once."""
    return "stopped"


@tool
def patrol(route: Literal["perimeter", "car_park"], laps: Annotated[int, "How many laps, 1 to 5."] = 1) -> str:
    """Drive a patrol route."""
    return "patrolling"


@tool
def start_cycle(
    mode: Literal["floor", "walls", "full"], minutes: Annotated[int, "Length, 30 to 240 minutes."] = 120
) -> str:
    """Start a cleaning cycle."""
    return "cleaning"


GUARD = SchemaResolver([emergency_stop, patrol, start_cycle])


def test_two_verbs_that_both_end_something_working_are_near_so_a_drastic_tool_is_confirmed():
    p = GUARD.propose("kill the motors")  # "kill" ~ "stop": both kinds of ending (WordNet)
    assert p.call == ("emergency_stop", {}) and p.clarify == "Did you mean emergency stop?", p


def test_do_before_a_count_is_the_main_verb_and_a_count_out_of_bounds_asks_how_many():
    assert GUARD.propose("do three laps of the car park").call == ("patrol", {"route": "car_park", "laps": 3})
    p = GUARD.propose("do ten laps of the perimeter")
    assert p.clarify == "I can patrol from 1 to 5 laps. How many laps should I patrol?", p


def test_a_word_taken_as_a_value_is_no_end_of_a_scale():
    p = GUARD.propose("start a full cycle")  # "full" is the mode, not the longest duration
    assert p.call == ("start_cycle", {"mode": "full"}), p


@tool
def set_zoom(level: Annotated[float, "Zoom factor between 1 and 20."]) -> str:
    """Set the optical zoom."""
    return "zoomed"


def test_a_noun_made_a_verb_keeps_a_particle_of_direction():
    p = SchemaResolver([set_zoom, emergency_stop]).propose("zoom in")  # named; how far is asked
    assert p.call == ("set_zoom", {}) and p.clarify is not None and "level" in p.missing["set_zoom"], p


@tool
def set_suction(power_percent: Annotated[int, "Pump power from 0 to 100 percent."]) -> str:
    """Set the suction pump power."""
    return "set"


@tool
def turn(angle_deg: float) -> str:
    """Turn on the spot. Positive turns left, negative turns right."""
    return "turned"


POOL = SchemaResolver([set_suction, turn])


def test_a_particle_after_the_object_before_a_level_is_the_verbs_not_a_path():
    # "down to a quarter": a level, so "turn ... down" is the phrasal verb, not a rotation
    p = POOL.propose("turn the suction down to a quarter of its power")
    assert p.call == ("set_suction", {"power_percent": 25}), p


def test_a_part_of_the_whole_said_in_words_is_a_percentage():
    assert POOL.propose("set the suction to half").call == ("set_suction", {"power_percent": 50})


def test_a_fraction_for_a_whole_number_parameter_is_asked_not_rounded():
    p = POOL.propose("set the suction to 0.5 percent")  # rounding gives 0: the pump off
    assert p.call == ("set_suction", {}) and p.clarify is not None and "power_percent" in p.problems["set_suction"], p


@tool
def take_snapshot(count: int = 1) -> str:
    """Save still photos of the current view."""
    return "saved"


def test_a_verb_no_tool_has_with_one_tools_object_asks_about_that_tool():
    p = SchemaResolver([take_snapshot, set_zoom]).propose("snap a photo")
    assert p.call == ("take_snapshot", {}) and p.clarify == "Did you mean take the snapshot?", p


@tool
def follow_person(goal_name: str = "me") -> str:
    """Follow a person around."""
    return "following"


@tool
def count_items(sku: str) -> str:
    """Count the items of one SKU on the shelf in front."""
    return "12"


@tool
def go_to_shelf(aisle: int, shelf: int) -> str:
    """Drive to a shelf and face it.

    Args:
        aisle: Aisle number, 1 to 24.
        shelf: Shelf number within the aisle, 1 to 12.
    """
    return "there"


STORE = SchemaResolver([follow_person, count_items, go_to_shelf])


def test_a_name_set_off_by_a_comma_is_the_one_spoken_to_not_a_value():
    p = STORE.propose("follow me, Rex")
    assert p.call is not None and "Rex" not in p.call[1].values(), p


def test_the_tools_own_noun_names_the_tool_not_the_value():
    p = STORE.propose("count the items")  # which SKU? asked, not "items"
    assert p.call is None or "sku" not in p.call[1], p


def test_a_number_after_a_parameters_name_is_that_parameters():
    assert STORE.propose("go to shelf 3 in aisle 12").call == ("go_to_shelf", {"aisle": 12, "shelf": 3})
    p = STORE.propose("go to aisle 6")
    assert p.call == ("go_to_shelf", {"aisle": 6}) and p.clarify == "Which shelf?", p


@tool
def raise_mast(delta_cm: Annotated[float, "centimetres; positive raises, negative lowers"]) -> str:
    """Raise or lower the camera mast (at most 50 cm per move)."""
    return "moved"


@tool
def set_posture(posture: Literal["sit", "stand"]) -> str:
    """Sit or stand up."""
    return "ok"


SCANNER = SchemaResolver([raise_mast, count_items, set_posture])


def test_a_string_said_right_after_its_parameters_name_is_its_value():
    assert SCANNER.propose("how many of SKU 4417 are on this shelf?").call == ("count_items", {"sku": "4417"})


def test_a_request_to_read_after_then_is_a_step_of_the_plan_not_dropped():
    p = SCANNER.propose("raise the mast 30 cm, then count SKU 7781")
    assert p.plan == [("raise_mast", {"delta_cm": 30}), ("count_items", {"sku": "7781"})], p


def test_a_plan_step_that_lacks_a_string_asks_for_it_instead_of_offering_a_yes():
    p = SCANNER.propose("raise the mast 30 cm, then count the items")
    assert p.clarify is not None and not p.clarify.startswith("Did you mean"), p


def test_a_verbless_lead_in_is_read_with_the_request_after_it_but_an_unknown_request_is_not():
    assert SCANNER.propose("okay, up on your feet, stand up").call == ("set_posture", {"posture": "stand"})
    p = SCANNER.propose("dance, then stand up")
    assert p.clarify is not None and p.clarify.startswith("I can't do 'dance'. Should I just"), p
    # the part it can do is offered without the one it cannot: a yes runs only that
    assert p.plan == [("set_posture", {"posture": "stand"})], p


def test_a_part_that_names_no_tool_is_offered_without_only_when_the_rest_is_clear():
    p = SCANNER.propose("dance, then raise the mast")  # the mast's part lacks a value
    assert p.clarify == "I can't do 'dance'." and p.call is None, p


@tool
def run_scan_mission(first_aisle: int, last_aisle: int) -> str:
    """Scan every shelf from one aisle to another."""
    return "scanning"


def test_two_numbers_said_as_a_range_fill_the_parameters_named_as_its_ends():
    r = SchemaResolver([run_scan_mission])
    assert r.propose("scan aisles 3 through 6").call == ("run_scan_mission", {"first_aisle": 3, "last_aisle": 6})
    p = r.propose("run the scan mission from aisle twelve to aisle ten")  # in the order said
    assert p.call == ("run_scan_mission", {"first_aisle": 12, "last_aisle": 10}), p
    assert "first_aisle" not in r.propose("run the scan mission on aisles 3 and 6").call[1]


@tool
def get_inventory_report() -> str:
    """Report the inventory of the last scan."""
    return "12 items"


def test_a_light_verb_defers_to_a_reading_tools_own_object():
    r = SchemaResolver([get_inventory_report, count_items])
    assert r.propose("give me the inventory report").call == ("get_inventory_report", {})


@tool
def collect_sample(jar: Annotated[int, "Jar number, 1 to 6."]) -> str:
    """Suck sediment into a sample jar."""
    return "collected"


@tool
def get_sample_inventory() -> str:
    """Report which sample jars are filled."""
    return "jars 1 and 2"


def test_a_light_verb_reads_a_report_only_when_it_is_given_to_the_speaker():
    p = SchemaResolver([collect_sample, get_sample_inventory]).propose("take a sample")
    assert p.call == ("collect_sample", {}) and p.clarify == "Which jar?", p


def test_a_first_part_that_names_a_tool_is_no_lead_in():
    p = SchemaResolver([drive_straight, turn]).propose("back up two metres then turn left ninety degrees")
    assert p.plan == [("drive_straight", {"meters": -2}), ("turn", {"angle_deg": 90})], p


@tool
def slide(distance_cm: float) -> str:
    """Move the dolly along the track.

    Args:
        distance_cm: How far, in centimetres. Positive slides to the right and negative to the
            left (as seen from behind the camera).
    """
    return "slid"


@tool
def set_vents(opening_percent: int) -> str:
    """Open or close the roof vents. 0 is fully closed and 100 is fully open."""
    return "ok"


@tool
def move_to_bed(bed: Annotated[int, "Bed number, 1 to 12."]) -> str:
    """Drive over a plant bed."""
    return "there"


@tool
def show_message(message: str) -> str:
    """Show a text message on the chest screen."""
    return "shown"


@tool
def set_display(mode: Literal["welcome", "map", "off"]) -> str:
    """Switch what the chest screen shows."""
    return "ok"


def test_a_remark_in_parentheses_is_no_direction_of_a_sign_convention():
    p = SchemaResolver([slide]).propose("slide 20 centimetres")  # "behind" is a point of view
    assert p.call == ("slide", {}) and p.clarify == "Which way should I slide: right or left?", p


def test_the_two_ends_said_as_the_full_extent_bound_the_value():
    p = SchemaResolver([set_vents]).propose("open the vents to 150 percent")
    assert p.call == ("set_vents", {}) and p.clarify is not None, p


def test_a_measure_is_no_count_or_number_of_a_thing():
    p = SchemaResolver([move_to_bed]).propose("move to bed ten centimetres")
    assert p.call is None or "bed" not in p.call[1], p


def test_a_string_that_opens_with_the_parameters_name_does_not_say_it():
    p = SchemaResolver([show_message, set_display]).propose("show a message on your screen")
    assert p.call == ("show_message", {}) and p.clarify == "What message should I show?", p


def test_a_value_of_another_tool_inside_free_words_is_asked_about():
    p = SchemaResolver([show_message, set_display]).propose("show the welcome screen")
    assert p.call == ("set_display", {"mode": "welcome"}) and p.clarify.startswith("Did you mean"), p
