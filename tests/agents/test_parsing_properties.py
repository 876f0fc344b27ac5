"""Property tests of the tool-call parser: whatever text a model emits, parsing returns
(never raises), every call found is well formed, and a clean call in any supported format
round-trips exactly."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from edgevox.agents.parsing import looks_like_call, parse_reply, parse_tool_calls
from edgevox.agents.tools import ToolCall, tool


@tool
def move(distance_m: float, speed: str = "normal") -> str:
    """Drive. distance_m: metres, -10 to 10"""
    return "ok"


@tool
def stop() -> str:
    """Stop."""
    return "ok"


TOOLS = [move, stop]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
# Text that looks like what small models emit: fragments of calls, brackets, tags, words.
fragments = st.sampled_from(
    [
        '{"name": "move"',
        '"arguments": {',
        "}",
        "]",
        "[",
        "{",
        "(",
        ")",
        "<tool_call>",
        "</tool_call>",
        "```json",
        "move(",
        "distance_m=",
        "stop()",
        "<|python_tag|>",
        '"',
        "\\",
        ",",
        ":",
        "1e999",
        "nan",
        " ",
        "\n",
        "ok",
    ]
)
model_text = st.lists(fragments | st.text(max_size=6), max_size=40).map("".join)


def _well_formed(calls: list[ToolCall]) -> None:
    for call in calls:
        assert isinstance(call.name, str) and call.name
        assert isinstance(call.arguments, dict)


@given(st.text(max_size=400))
def test_any_text_parses_without_raising(text):
    _well_formed(parse_tool_calls(text, TOOLS))
    parse_reply(text)
    looks_like_call(text, TOOLS)


@given(model_text)
def test_call_like_garbage_parses_without_raising(text):
    _well_formed(parse_tool_calls(text, TOOLS))
    parse_reply(text)


@given(st.integers(min_value=1, max_value=30_000), st.sampled_from(["[", "{", "(", "move(distance_m="]))
def test_any_nesting_depth_parses_without_raising(depth, opener):
    text = opener * depth
    assert parse_tool_calls(text, TOOLS) == [] or depth == 1
    assert parse_tool_calls(text + "]" * depth, TOOLS) == [] or depth == 1


@given(json_values)
def test_any_json_value_as_arguments_never_raises(value):
    text = json.dumps({"name": "move", "arguments": value})
    calls = parse_tool_calls(text, TOOLS)
    _well_formed(calls)
    if isinstance(value, dict):
        assert [c.arguments for c in calls] == [value]


@given(
    st.floats(min_value=-10, max_value=10, allow_nan=False),
    st.sampled_from(["slow", "normal", "fast"]),
    st.sampled_from(["hermes", "json", "openai", "llama", "python", "list"]),
)
def test_a_clean_call_in_every_format_round_trips(distance, speed, form):
    args = {"distance_m": distance, "speed": speed}
    text = {
        "hermes": f"<tool_call>{json.dumps({'name': 'move', 'arguments': args})}</tool_call>",
        "json": json.dumps({"name": "move", "arguments": args}),
        "openai": json.dumps({"function": {"name": "move", "arguments": json.dumps(args)}}),
        "llama": "<|python_tag|>" + json.dumps({"name": "move", "parameters": args}),
        "python": f"move(distance_m={distance!r}, speed={speed!r})",
        "list": f"[move(distance_m={distance!r}, speed={speed!r}), stop()]",
    }[form]
    calls = parse_tool_calls(text, TOOLS)
    assert calls[0].name == "move" and calls[0].arguments == args
    assert looks_like_call(text, TOOLS)
