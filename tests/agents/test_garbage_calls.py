"""What a small model really emits instead of a clean call: deep brackets, values Python
cannot hold, cut-off JSON, calls in the words stage. Nothing escapes the agent as an
exception, nothing runs that was not cleanly called, no call is spoken, and the next turn
still works."""

from __future__ import annotations

import pytest

from edgevox.agents.decoders import GARBLED_CALL_REPLY, FreeTextDecoder
from edgevox.agents.llm_agent import LLMAgent
from edgevox.agents.parsing import parse_tool_calls
from edgevox.agents.tools import tool
from edgevox.testing import ScriptedLLM

GARBAGE = [
    "[" * 20000,
    "{" * 20000,
    "move(distance_m={[]: 1})",
    "move(distance_m=" + "(" * 5000 + ")",
    '{"name": "move", "arguments": {"distance_m": ' + "[" * 5000 + "}}",
    '{"name": "move", "arguments": "' + '\\"' * 100 + '"}',
    '<tool_call>{"name": "move", "arguments": {"distance_m": 1</tool_call>',
    '{"name": "move", "arguments": ',
    '```json\n{"name": "move", "arguments": {"distance_m": 1}\n```',
    'move(distance_m=float("nan"))',
    "move()",
    "{}",
    "[]",
]


def robot():
    moves: list[float] = []

    @tool
    def move(distance_m: float) -> str:
        """Drive forward. distance_m: metres, -10 to 10"""
        moves.append(distance_m)
        return f"Moved {distance_m} metres."

    return move, moves


@pytest.mark.parametrize("text", GARBAGE, ids=lambda t: t[:24])
def test_the_parser_never_raises_and_finds_no_call_in_garbage(text):
    move, _ = robot()
    calls = parse_tool_calls(text, [move])  # never raises
    if text == "move()":
        assert [c.name for c in calls] == ["move"]  # a call, parsed (move() then fails its argument check)
    else:
        assert calls == []


@pytest.mark.parametrize("decoder", [None, FreeTextDecoder()], ids=["schema-first", "free-text"])
def test_garbage_then_a_real_command_across_turns(decoder):
    move, moves = robot()
    for text in GARBAGE:
        # turn 1: chit-chat answered with garbage; turn 2: the same agent still acts on a clean call
        llm = ScriptedLLM([text, text, text])
        kwargs = {"decoder": decoder} if decoder is not None else {}
        agent = LLMAgent("robot", llm=llm, tools=[move], **kwargs)
        result = agent.run("tell me something nice", None)
        assert result.text == GARBLED_CALL_REPLY or "move" not in result.text, (text[:40], result.text[:80])
        assert "{" not in result.text and "[[" not in result.text
        assert moves == []  # only a clean call ever runs
        moves.clear()
    clean = ScriptedLLM(['<tool_call>{"name": "move", "arguments": {"distance_m": 2}}</tool_call>', "Done."])
    agent = LLMAgent("robot", llm=clean, tools=[move], decoder=FreeTextDecoder())
    agent.run("drive forward two metres", None)
    assert moves == [2]


def test_words_are_kept_when_the_model_only_decorates_them():
    move, _ = robot()
    for text, expected in [
        ("[laughs] Sure, here is one.", "[laughs] Sure, here is one."),
        ('{"reply": "Hello there"}', "Hello there"),
        ("Move along, nothing to see.", "Move along, nothing to see."),
        ("moving is fun", "moving is fun"),
    ]:
        agent = LLMAgent("robot", llm=ScriptedLLM([text]), tools=[move])
        assert agent.run("tell me a joke", None).text == expected


# --- what tools return -----------------------------------------------------------------------


class _Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("str broke")

    __repr__ = __str__


def _recursive() -> list:
    loop: list = []
    loop.append(loop)
    return loop


@pytest.mark.parametrize(
    ("returns", "ok", "expected"),
    [
        (lambda: "Moved. " * 200_000, True, "Moved. Moved."),
        (lambda: _Unprintable(), True, "a _Unprintable value"),
        (_recursive, True, "..."),
        (lambda: {"pose": {"x": 1.0, "y": [1, 2, {"z": 3}]}}, True, "pose: x: 1.0, y: 1, 2, z: 3"),
        (lambda: __import__("sys").exit(4), False, "called sys.exit(4)"),
        (lambda: (_ for _ in ()).throw(KeyboardInterrupt()), False, "raised KeyboardInterrupt"),
    ],
    ids=["huge", "unprintable", "recursive", "nested", "sys.exit", "keyboard-interrupt"],
)
def test_whatever_a_tool_returns_or_raises_the_turn_ends_and_the_next_one_works(returns, ok, expected):
    from edgevox.agents.tool_result import MAX_RESULT_CHARS

    @tool
    def report() -> str:
        """Report the robot's state."""
        return returns()

    llm = ScriptedLLM(['<tool_call>{"name": "report", "arguments": {}}</tool_call>'], default="All good.")
    agent = LLMAgent("robot", llm=llm, tools=[report], decoder=FreeTextDecoder(), speak_tool_results=True)
    result = agent.run("report", None)
    (call,) = result.tool_calls
    assert call.ok is ok
    text = call.as_text()
    assert expected in text
    assert len(text) <= MAX_RESULT_CHARS + 10
    assert len(result.text) <= MAX_RESULT_CHARS + 10  # a log dump is never spoken whole
    assert agent.run("thanks", None).text == "All good."
