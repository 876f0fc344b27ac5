"""The constrained tool decision stays cheap (issue 11: it took 2-12 s on 2 cores).

What it costs is prompt tokens the KV cache does not hold and decode steps. The fake-LLM
tests pin the prompt layout that keeps both small; the real-model test times decisions
against a plain completion in the same run, so it is a ratio, not an absolute.
"""

from __future__ import annotations

import time
from typing import Any, Literal

import pytest

from edgevox.agents.decoders import DecisionRequest, SchemaFirstDecoder, TwoStageDecoder
from edgevox.agents.tools import tool
from edgevox.language import warm_up
from edgevox.runtime.context import AgentContext


@tool(examples=[("switch the bedroom light off", {"room": "bedroom", "on": False})])
def set_light(room: Literal["kitchen", "bedroom"], on: bool) -> str:
    """Switch the lights in a room on or off.

    Args:
        room: Which room.
        on: True for on.
    """
    return "ok"


@tool
def set_timer(minutes: float) -> str:
    """Set a countdown timer.

    Args:
        minutes: Duration in minutes.
    """
    return "ok"


class Recorder:
    """``generate`` that answers from a script and records (messages, grammar, max_tokens)."""

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.calls: list[tuple[list[dict[str, Any]], str | None, int]] = []

    def __call__(self, messages: list[dict[str, Any]], *, grammar: str | None = None, max_tokens: int = 64) -> str:
        self.calls.append(([dict(m) for m in messages], grammar, max_tokens))
        return self.replies.pop(0)


CONVERSATION = [
    {"role": "system", "content": "You are a home robot."},
    {"role": "user", "content": "hello"},
    {"role": "assistant", "content": "Hi!"},
    {"role": "user", "content": "kitchen lights"},
]


def request(generate: Recorder, text: str = "kitchen lights") -> DecisionRequest:
    return DecisionRequest(text, list(CONVERSATION), [set_light, set_timer], generate)


def test_the_name_prompt_extends_the_conversation_the_reply_prompt_starts_with():
    gen = Recorder("none")
    TwoStageDecoder().decide(request(gen))
    (messages, grammar, max_tokens), *_ = gen.calls
    # System prompt and history are what the last reply left in the KV cache: only the turn is new.
    assert messages[:-1] == CONVERSATION[:-1]
    assert messages[-1]["content"].startswith("kitchen lights\n")
    assert max_tokens == 1 and grammar is not None


def test_a_first_token_that_starts_one_option_decides_without_a_decode_step():
    gen = Recorder("set_l", "kit", "t")
    decision = TwoStageDecoder().decide(request(gen), candidates=["set_light", "set_timer"], fixed={})
    assert [c[2] for c in gen.calls] == [1, 1, 1]  # name, room, on: one sampled token each
    assert decision.call.name == "set_light" and decision.call.arguments == {"room": "kitchen", "on": True}


def test_a_first_token_several_options_share_decodes_the_name_in_full():
    gen = Recorder("set", "set_timer", "5")
    decision = TwoStageDecoder(name_max_tokens=8).decide(request(gen), fixed={})
    assert [c[2] for c in gen.calls][:2] == [1, 8]
    assert gen.calls[0][0] == gen.calls[1][0]  # the same prompt again: fully cached
    assert decision.call.name == "set_timer" and decision.call.arguments == {"minutes": 5}


def test_only_missing_values_are_asked_as_a_follow_up_of_the_name_prompt():
    gen = Recorder("set_light", "true")
    decision = TwoStageDecoder().decide(request(gen), fixed={"set_light": {"room": "kitchen"}})
    (name_msgs, _, _), (value_msgs, value_grammar, max_tokens) = gen.calls
    assert value_msgs[: len(name_msgs)] == name_msgs  # extends the cached prompt
    assert value_msgs[len(name_msgs)] == {"role": "assistant", "content": "set_light"}
    assert value_grammar == 'root ::= "true" | "false"\n' and max_tokens == 1
    assert decision.call.arguments == {"room": "kitchen", "on": True}


# -- the real model ---------------------------------------------------------------------------

UNSURE = [
    "ferry me to the bedroom",
    "usher me to the office",
    "escort me to the office",
    "carry me to the bedroom",
    "show me the kitchen",
]
"""Requests the home robot's schema resolver is unsure of (the LLM decides)."""

BASELINE_WORDS = "the cat sat on a mat and then we all went home to eat some bread".split()

MAX_RATIO = 3.0
"""Decision p95 / a 1-token completion of an uncached 64-token user turn, both in this run.
Measured twice on 2 shared cores: 1.1x and 1.2x (p95 0.88 and 0.96 s); the layout before
issue 11 (~350 uncached prompt tokens and up to ~17 decode steps per decision): 4.2x and
4.8x (p95 3.3 and 4.0 s)."""


@pytest.mark.models
@pytest.mark.slow
def test_unsure_decisions_cost_about_one_short_prompt_read(real_llm):
    from edgevox.examples.home_robot import build_home_robot_agent

    agent = build_home_robot_agent(real_llm)
    assert isinstance(agent.decoder, SchemaFirstDecoder)
    system = {"role": "system", "content": agent.instructions}

    def baseline(i: int) -> float:
        words = f"Note {i}:"  # 64 tokens nobody has cached (the number makes each one new)
        while real_llm.count_tokens(words) < 64:
            words += " " + BASELINE_WORDS[real_llm.count_tokens(words) % len(BASELINE_WORDS)]
        start = time.perf_counter()
        real_llm.complete([{"role": "user", "content": words}], max_tokens=1)
        return time.perf_counter() - start

    real_llm.warmup(agent.instructions)
    warm_up()  # the parser and WordNet load once per process (App.start does this); not a decision's cost
    decisions, bases = [], []
    try:
        for i, text in enumerate(UNSURE):
            bases.append(baseline(i))
            # The previous turn was a reply: its prompt is what the KV cache holds.
            real_llm.complete([system, {"role": "user", "content": "tell me a joke"}], max_tokens=2)
            start = time.perf_counter()
            decision = agent.decide(text, AgentContext(session_id=f"latency-{i}"))
            decisions.append(time.perf_counter() - start)
            assert decision.decided_by == "llm", f"{text!r} no longer reaches the LLM: pick an unsure phrasing"
    finally:
        agent.close()
    base = sorted(bases)[len(bases) // 2]
    p95 = max(decisions)  # nearest-rank p95 of 5
    ms = ", ".join(f"{s * 1000:.0f}" for s in decisions)
    assert p95 <= MAX_RATIO * base, (
        f"decision p95 {p95 * 1000:.0f} ms = {p95 / base:.1f}x a 1-token completion of a 64-token turn "
        f"({base * 1000:.0f} ms), over {MAX_RATIO}x; decisions: {ms} ms"
    )


def test_a_tool_only_the_model_chose_is_asked_about_not_run():
    # "illuminate the kitchen": no word names an action, only the room matched. Whatever tool the
    # model then picks (a 135M model picks the first candidate, go_to), the robot asks first.
    from edgevox.examples.home_robot import build_home_robot_agent
    from edgevox.testing import ScriptedLLM

    agent = build_home_robot_agent(ScriptedLLM(default="go_to"))
    try:
        decision = agent.decide("illuminate the kitchen")
        assert decision.call is None and decision.decided_by == "llm"
        assert decision.clarify == "Did you mean go to kitchen?"
        assert decision.proposed is not None and decision.proposed.name == "go_to"
    finally:
        agent.close()
