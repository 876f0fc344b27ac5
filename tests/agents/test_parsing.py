from __future__ import annotations

from edgevox.agents.parsing import parse_reply, parse_tool_calls
from edgevox.agents.tools import tool


@tool
def move(distance_m: float, speed: float = 1.0) -> str:
    """Move."""
    return ""


@tool
def stop() -> str:
    """Stop."""
    return ""


TOOLS = [move, stop]


def _calls(text):
    return [(c.name, c.arguments) for c in parse_tool_calls(text, TOOLS)]


def test_hermes_qwen_tool_call_tags_including_several():
    text = 'Sure.<tool_call>\n{"name": "move", "arguments": {"distance_m": 2}}\n</tool_call><tool_call>{"name": "stop", "arguments": {}}</tool_call>'
    assert _calls(text) == [("move", {"distance_m": 2}), ("stop", {})]


def test_llama3_json_with_parameters_and_python_tag():
    assert _calls('<|python_tag|>{"name": "move", "parameters": {"distance_m": -1}}') == [("move", {"distance_m": -1})]
    assert _calls('I will do it: {"type": "function", "name": "stop", "parameters": {}}') == [("stop", {})]


def test_openai_function_object_with_string_arguments_and_lists():
    text = '[{"function": {"name": "move", "arguments": "{\\"distance_m\\": 3}"}}]'
    assert _calls(text) == [("move", {"distance_m": 3})]


def test_pythonic_calls_keyword_positional_and_list():
    assert _calls("move(distance_m=2)") == [("move", {"distance_m": 2})]
    assert _calls("[move(1.5, speed=0.5), stop()]") == [("move", {"distance_m": 1.5, "speed": 0.5}), ("stop", {})]
    assert _calls("I would say hello(world) to you") == []


def test_our_grammar_format_and_reply_in_words():
    assert _calls('{"name": "move", "arguments": {"distance_m": 2}}') == [("move", {"distance_m": 2})]
    assert _calls('{"reply": "Hello there"}') == []
    assert parse_reply('{"reply": "Hello there"}') == "Hello there"
    assert _calls("Hello! I am a robot.") == []
