from __future__ import annotations

import pytest

from edgevox.agents.hooks import End, Replace, hook
from edgevox.agents.llm_agent import LLMAgent
from edgevox.agents.memory import MemoryStore
from edgevox.agents.tools import tool
from edgevox.errors import AgentError
from edgevox.runtime.context import AgentContext
from edgevox.testing import ScriptedLLM


@tool
def move(distance_m: float) -> str:
    """Drive straight forward.

    Args:
        distance_m: Distance in meters.
    """
    return f"moved {distance_m}"


def test_hooks_run_by_priority_and_replace_feeds_the_next():
    order = []

    @hook("before_tool", priority=1)
    def low(call, ctx):
        order.append(("low", call.arguments["distance_m"]))

    @hook("before_tool", priority=10)
    def high(call, ctx):
        order.append(("high", call.arguments["distance_m"]))
        return Replace(type(call)(call.name, {"distance_m": 1.0}, call.id))  # clamp

    agent = LLMAgent("robot", tools=[move], hooks=[low, high], speak_tool_results=True)
    result = agent.run("drive forward 5 meters")
    assert order == [("high", 5), ("low", 1.0)]
    assert result.text == "moved 1.0"


def test_end_before_tool_skips_the_tool_and_end_after_tool_ends_the_run():
    ran = []

    @hook("before_tool")
    def veto(call, ctx):
        ran.append("veto")
        return End("not allowed while charging")

    agent = LLMAgent("robot", tools=[move], hooks=[veto], speak_tool_results=True)
    result = agent.run("drive forward 5 meters")
    assert result.text == "not allowed while charging" and result.tool_calls[0].value == "not allowed while charging"

    @hook("after_tool")
    def summarise(tr, ctx):
        return End(f"Done: {tr.value}")

    agent = LLMAgent("robot", tools=[move], llm=ScriptedLLM([]), hooks=[summarise])
    assert agent.run("drive forward 2 meters").text == "Done: moved 2"


def test_llm_hooks_end_without_calling_the_model_and_replace_the_output():
    @hook("before_llm")
    def canned(messages, ctx):
        return End("I only talk about robots.")

    llm = ScriptedLLM([])
    assert LLMAgent("chat", llm=llm, hooks=[canned]).run("tell me a joke").text == "I only talk about robots."
    assert llm.calls == []

    @hook("after_llm")
    def censor(text, ctx):
        return End(text.replace("darn", "****"))

    ctx = AgentContext(hooks=(censor,))  # context hooks apply too
    assert LLMAgent("chat", llm=ScriptedLLM(["oh darn"])).run("hi", ctx).text == "oh ****"


def test_a_failing_hook_fails_the_run_with_its_name():
    @hook("before_llm", name="broken")
    def broken(messages, ctx):
        raise ValueError("boom")

    result = LLMAgent("chat", llm=ScriptedLLM(["x"]), hooks=[broken]).run("hi")
    assert not result.ok and "hook 'broken' at before_llm raised ValueError: boom" in result.error
    with pytest.raises(AgentError):
        from edgevox.agents.hooks import HookPoint, run_hooks

        run_hooks([broken], HookPoint.BEFORE_LLM, [], None)


def test_memory_trims_oldest_turns_to_budget_and_keeps_system_and_new():
    store = MemoryStore(token_budget=40, count_tokens=lambda text: len(text.split()))
    for i in range(10):
        store.add_turn(
            "s", [{"role": "user", "content": f"question {i} " * 2}, {"role": "assistant", "content": "answer"}]
        )
    system = [{"role": "system", "content": "you are a robot"}]
    new = [{"role": "user", "content": "latest"}]
    prompt = store.build("s", system, new)
    assert prompt[0] == system[0] and prompt[-1] == new[0]
    users = [m["content"] for m in prompt if m["role"] == "user"][:-1]
    # Over budget, the oldest turns go in one block, down to half of what is left (whole turns).
    assert users == [f"question {i} " * 2 for i in (9,)]
    cost = sum(len(m["content"].split()) + 4 for m in prompt)
    assert cost <= 40
    assert store.build("other", system, new) == [*system, *new]


def test_memory_trims_in_blocks_so_the_prompt_only_grows_at_its_end_between_trims():
    """Once full, a sliding window would change the prompt right after the system prompt on
    every turn (llama.cpp then re-evaluates the whole history); blocks keep a stable prefix."""
    store = MemoryStore(token_budget=100, count_tokens=lambda text: len(text.split()))
    system = [{"role": "system", "content": "you are a robot"}]
    prompts = []
    for i in range(40):
        prompt = store.build("s", system, [{"role": "user", "content": f"q{i}"}])
        prompts.append(prompt)
        assert sum(len(m["content"].split()) + 4 for m in prompt) <= 100
        store.add_turn("s", [{"role": "user", "content": f"q{i}"}, {"role": "assistant", "content": "a b c"}])
    stable = sum(
        1 for before, after in zip(prompts, prompts[1:], strict=False) if after[: len(before) - 1] == before[:-1]
    )
    trims = len(prompts) - 1 - stable
    assert 2 <= trims <= 8, trims  # a handful of block trims over 40 turns, not one per turn


def test_memory_store_bounds_sessions_and_turns():
    store = MemoryStore(100, max_sessions=2, max_turns=3)
    for s in ("a", "b", "c"):
        for i in range(5):
            store.add_turn(s, [{"role": "user", "content": str(i)}])
    assert store.history("a") == []  # evicted (least recently used), recreated empty
    assert [m["content"] for m in store.history("c")] == ["2", "3", "4"]


def test_end_after_tool_refuses_the_remaining_calls_of_the_message_visibly():
    from edgevox.agents.decoders import FreeTextDecoder

    @hook("after_tool")
    def first_only(tr, ctx):
        return End("Stopped after the first move.")

    two = '[{"name": "move", "arguments": {"distance_m": 1}}, {"name": "move", "arguments": {"distance_m": 2}}]'
    agent = LLMAgent("robot", tools=[move], llm=ScriptedLLM([two]), decoder=FreeTextDecoder(), hooks=[first_only])
    result = agent.run("go one then two meters")
    assert result.text == "Stopped after the first move."
    assert [(tr.ok, tr.error) for tr in result.tool_calls] == [
        (True, ""),
        (False, "not run because a hook ended the turn"),
    ]


def test_memory_blocks_by_turn_count_keep_half_and_the_newest():
    store = MemoryStore(10_000, max_turns=4)
    for i in range(5):
        store.add_turn("s", [{"role": "user", "content": f"q{i}"}, {"role": "assistant", "content": f"a{i}"}])
    # Past 4 turns, the oldest go in one block down to half: the prompt then only grows again.
    assert [m["content"] for m in store.history("s") if m["role"] == "user"] == ["q3", "q4"]


def test_truncate_reply_touches_only_the_turn_its_owner_stored():
    store = MemoryStore()
    owner, other = object(), object()
    store.add_turn(
        "s", [{"role": "user", "content": "count"}, {"role": "assistant", "content": "One. Two."}], owner=owner
    )
    assert not store.truncate_reply("s", "", owner=other)
    assert store.truncate_reply("s", "One.", owner=owner)
    assert store.history("s")[-1] == {"role": "assistant", "content": "One."}
    assert store.truncate_reply("s", " ", owner=owner)
    assert store.history("s") == [{"role": "user", "content": "count"}]
    assert not store.truncate_reply("nobody", "x")


def test_consecutive_user_messages_are_merged_in_the_prompt():
    store = MemoryStore()
    store.add_turn("s", [{"role": "user", "content": "count"}])  # its reply was not heard
    prompt = store.build("s", [{"role": "system", "content": "sys"}], [{"role": "user", "content": "slower"}])
    assert prompt == [{"role": "system", "content": "sys"}, {"role": "user", "content": "count\nslower"}]


def test_memory_counts_its_block_trims():
    store = MemoryStore(token_budget=40, count_tokens=lambda text: len(text.split()), max_turns=4)
    assert store.trims("s") == 0
    for i in range(5):
        store.add_turn("s", [{"role": "user", "content": f"q{i}"}])
    assert store.trims("s") == 1  # by turn count
    store.add_turn("s", [{"role": "user", "content": "word " * 30}])
    store.build("s", [], [{"role": "user", "content": "next"}])
    assert store.trims("s") == 2  # by token budget
