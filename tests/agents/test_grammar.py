from __future__ import annotations

import dataclasses
import json
from typing import Annotated, Literal

import pytest

from edgevox.agents.grammar import arguments_grammar, choice_grammar, schema_grammar, tool_call_grammar
from edgevox.agents.tools import tool


@dataclasses.dataclass
class Pose:
    x: float
    y: float
    frame: Literal["map", "odom"] = "map"


@tool
def plan(
    waypoints: Annotated[list[Pose], "the points to visit in order"],
    speed: float | None = None,
    label: str = "",
) -> str:
    """Plan a path through waypoints."""
    return "ok"


@tool
def lights(room: Literal["kitchen", "living room"], on: bool, level: int = 100) -> str:
    """Switch a light."""
    return "ok"


def test_optional_arguments_may_be_omitted_in_any_subset():
    g = arguments_grammar(plan)
    line = next(s for s in g.splitlines() if s.startswith("plan-args ::="))
    # required first, then each optional behind its own "?"
    assert line == (
        'plan-args ::= "{" ws plan-args-waypoints-kv ( "," ws plan-args-speed-kv )? ( "," ws plan-args-label-kv )? ws "}"'
    )
    only_optional = schema_grammar(
        {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "boolean"}}}
    )
    root = next(s for s in only_optional.splitlines() if s.startswith("value ::="))
    assert root == 'value ::= "{" ws ( value-a-kv ( "," ws value-b-kv )? | value-b-kv )? ws "}"'


def test_fixed_values_and_string_choices_become_literals():
    g = arguments_grammar(lights, fixed={"room": "living room"})
    assert 'lights-args-room-const ::= "\\"living room\\""' in g
    g = arguments_grammar(plan, string_choices={"label": ["red cup", "cup"]})
    assert 'plan-args-label-choice ::= "\\"red cup\\"" | "\\"cup\\""' in g


def test_call_grammar_has_reply_alternative_and_choice_grammar():
    g = tool_call_grammar([plan, lights])
    assert g.startswith("root ::= call-plan | call-lights | reply\n")
    assert choice_grammar(["move", "none"]) == 'root ::= "move" | "none"\n'
    with pytest.raises(ValueError):
        tool_call_grammar([], allow_reply=False)


@pytest.mark.models
def test_real_engine_output_under_nested_grammar_always_validates(real_llm):
    """The grammar compiles in llama.cpp and whatever the model writes is a valid call."""
    grammar = tool_call_grammar([plan, lights], allow_reply=False)
    prompts = [
        "plan a path through (1, 2) and then (3, 4) in the odom frame",
        "switch the kitchen light on at level 40",
        "go to x 5 y 6",
    ]
    for prompt in prompts:
        messages = [
            {
                "role": "system",
                "content": "Answer with a JSON tool call: plan(waypoints, speed, label) or lights(room, on, level).",
            },
            {"role": "user", "content": prompt},
        ]
        out = real_llm.complete(messages, grammar=grammar, max_tokens=160)
        call = json.loads(out)
        target = {"plan": plan, "lights": lights}[call["name"]]
        target.validate(call["arguments"])  # raises if the grammar let anything invalid through
