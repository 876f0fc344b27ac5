"""Does a request name a tool (``edgevox.language.matching``)? One principle of English a row."""

from __future__ import annotations

import pytest

from edgevox.language.frames import read_frame
from edgevox.language.matching import EXACT, NEAR, SYNONYM, match
from edgevox.language.requests import read_request

FRAMES = {
    "take_off": read_frame("take_off", "Take off and hover.", {"properties": {}}),
    "turn": read_frame(
        "turn",
        "Turn in place. Positive turns left, negative turns right.",
        {"properties": {"degrees": {"type": "number"}}, "required": ["degrees"]},
    ),
    "set_volume": read_frame(
        "set_volume", "Set the speaker volume.", {"properties": {"level": {"type": "integer"}}, "required": ["level"]}
    ),
    "lift": read_frame(
        "lift", "Raise the platform.", {"properties": {"height_cm": {"type": "number"}}, "required": ["height_cm"]}
    ),
    "set_zoom": read_frame("set_zoom", "Set the optical zoom.", {"properties": {"level": {"type": "number"}}}),
    "open_gripper": read_frame("open_gripper", "Open the gripper.", {"properties": {}}),
}

ROWS = [
    # (request, tool, at least, at most) on the verb score
    ("take off now", "take_off", EXACT, EXACT),  # the same phrasal verb
    ("take a photo", "take_off", 0.0, 0.0),  # "take" alone is another verb than "take off"
    ("turn left ninety degrees", "turn", EXACT, EXACT),
    ("turn up the music", "turn", 0.0, NEAR),  # "turn up": a phrasal verb; "up" is no turn direction
    ("set the volume to five", "set_volume", 0.0, 1.0),  # a light verb alone is weak: its object decides
    ("raise the platform", "lift", SYNONYM, EXACT),  # WordNet synonyms: lift ~ raise
    ("lower the platform", "lift", 0.0, NEAR),  # antonyms never match
    ("zoom to eight times", "set_zoom", SYNONYM, SYNONYM),  # the tool's object said as a verb
    ("close the gripper", "open_gripper", 0.0, NEAR),
]


@pytest.mark.parametrize(("text", "tool", "low", "high"), ROWS)
def test_the_verb_names_the_tool_by_lemma_particle_and_wordnet_synonymy(text, tool, low, high):
    m = match(read_request(text), FRAMES[tool])
    assert low <= m.verb <= high, m


def test_the_object_names_the_tool_and_the_names_objects_weigh_more_than_the_docstrings():
    m = match(read_request("set the volume to five"), FRAMES["set_volume"])
    assert m.objects >= 1.0
    m = match(read_request("raise the speaker"), FRAMES["set_volume"])
    assert 0 < m.objects < 1.0  # "speaker" is only in its docstring


def test_argument_values_never_name_a_tool():
    m = match(
        read_request("the kitchen please"),
        read_frame("go_to", "Go to a room.", {"properties": {"room": {"type": "string", "enum": ["kitchen"]}}}),
    )
    assert m.trigger < 1.0
