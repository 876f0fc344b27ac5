from __future__ import annotations

import threading

import pytest

from edgevox.agents.decoders import FreeTextDecoder, GrammarDecoder, TwoStageDecoder
from edgevox.agents.events import AgentReply, ReplyDelta, ToolCallFinished, ToolCallStarted
from edgevox.agents.llm_agent import LLMAgent
from edgevox.agents.tools import tool
from edgevox.runtime.blackboard import Blackboard
from edgevox.runtime.context import AgentContext
from edgevox.testing import ScriptedLLM

moves: list[float] = []


@tool
def move(distance_m: float) -> str:
    """Drive straight forward or backward.

    Args:
        distance_m: Distance in meters. Negative for backwards.
    """
    moves.append(distance_m)
    return f"moved {distance_m}"


def test_final_reply_streams_piece_by_piece_and_is_published(recorded):
    bus, events = recorded
    llm = ScriptedLLM(["Hello there, I am a robot."])
    agent = LLMAgent("chat", "Be brief.", llm=llm)
    stream = agent.stream("hi", AgentContext(bus=bus))
    deltas = list(stream.text_deltas())
    assert deltas == ["Hello", " there,", " I", " am", " a", " robot."]
    result = stream.result()
    assert result.text == "Hello there, I am a robot." and result.ok and not result.tool_calls
    published = [e.text for e in events if isinstance(e, ReplyDelta)]
    assert published == deltas
    assert isinstance(events[-1], AgentReply) and events[-1].source == "chat"


def test_cancel_reaches_the_llm_mid_generation():
    gate = threading.Semaphore(0)
    llm = ScriptedLLM(["one two three four five six seven eight"], gate=gate)
    agent = LLMAgent("chat", llm=llm)
    ctx = AgentContext()
    seen: list[str] = []
    first = threading.Event()
    box = {}

    def consume():
        stream = agent.stream("talk", ctx)
        for piece in stream.text_deltas():
            seen.append(piece)
            first.set()
        box["result"] = stream.result()

    t = threading.Thread(target=consume, name="test-consumer")
    t.start()
    gate.release()  # let exactly one token through
    assert first.wait(5)
    ctx.cancel_token.cancel("barge-in")
    t.join(5)
    assert not t.is_alive()
    assert seen == ["one"]
    assert box["result"].cancelled and box["result"].text == "one"
    assert llm.calls[0].cancelled and llm.calls[0].tokens_yielded == 1


def test_llm_chosen_call_is_validated_executed_and_reported(recorded):
    bus, events = recorded
    moves.clear()
    # After the tool result the model is asked again (another tool, or none), then replies.
    llm = ScriptedLLM(["move", '{"distance_m": 2}', "none", "Done, I moved."])
    agent = LLMAgent("robot", "", tools=[move], llm=llm, decoder=TwoStageDecoder())  # no system prompt
    result = agent.run("please go ahead a bit", AgentContext(bus=bus))
    assert moves == [2]
    assert result.first_call.name == "move" and result.tool_calls[0].ok
    assert result.text == "Done, I moved."
    assert llm.calls[0].grammar.startswith('root ::= "move" | "none"')
    assert "distance_m" in llm.calls[1].grammar
    kinds = [type(e) for e in events if isinstance(e, (ToolCallStarted, ToolCallFinished, AgentReply))]
    assert kinds == [ToolCallStarted, ToolCallFinished, AgentReply]
    # The next decision and the reply prompt carry the tool result after the call.
    assert llm.calls[2].messages[-1]["content"].startswith("please go ahead a bit\n(The move tool ran.")
    # In plain words inside the user's turn: no JSON assistant message to imitate, no bare "tool" message.
    assert [m["role"] for m in llm.calls[3].messages] == ["user"]
    assert (
        llm.calls[3].messages[-1]["content"].startswith("please go ahead a bit\n(The move tool ran. Result: moved 2.")
    )
    assert "{" not in llm.calls[3].messages[-1]["content"]


def test_bad_arguments_from_the_model_become_a_tool_error_the_model_sees():
    llm = ScriptedLLM(["move", '{"distance_m": "far"}', "Sorry, I could not."])
    agent = LLMAgent("robot", tools=[move], llm=llm, decoder=TwoStageDecoder(), max_tool_hops=1)
    result = agent.run("go far")
    tr = result.tool_calls[0]
    assert not tr.ok and tr.error_kind == "arguments"
    assert tr.error == "tool 'move' argument 'distance_m': expected number, got 'far'"
    assert "expected number" in llm.calls[2].messages[-1]["content"]


def test_schema_fast_path_calls_without_the_llm_and_speaks_the_tool_result():
    moves.clear()
    llm = ScriptedLLM([])  # any LLM call would fail: none is left
    agent = LLMAgent("robot", tools=[move], llm=llm, speak_tool_results=True)
    result = agent.run("drive backwards two and a half meters")
    assert moves == [-2.5] and result.text == "moved -2.5"
    assert result.data["decided_by"] == "schema" and llm.calls == []


def test_llm_lock_is_held_around_llm_calls():
    class CountingLock:
        def __init__(self):
            self.lock = threading.Lock()
            self.entered = 0

        def __enter__(self):
            self.lock.acquire()
            self.entered += 1

        def __exit__(self, *exc):
            self.lock.release()

    lock = CountingLock()
    agent = LLMAgent("chat", llm=ScriptedLLM(["hi"]))
    agent.run("hello", AgentContext(llm_lock=lock))
    assert lock.entered == 1 and not lock.lock.locked()


def test_memory_carries_turns_within_a_session_only():
    llm = ScriptedLLM(default="ok")
    agent = LLMAgent("chat", "sys", llm=llm)
    agent.run("my name is Ada", AgentContext(session_id="a"))
    agent.run("what is my name?", AgentContext(session_id="a"))
    agent.run("what is my name?", AgentContext(session_id="b"))
    assert [m["content"] for m in llm.calls[1].messages] == ["sys", "my name is Ada", "ok", "what is my name?"]
    assert [m["content"] for m in llm.calls[2].messages] == ["sys", "what is my name?"]


def test_handoff_runs_target_in_child_context_with_same_bus_and_blackboard(recorded):
    bus, events = recorded
    board = Blackboard()
    seen = {}

    class Specialist:
        name = "kitchen_expert"
        description = "answers cooking questions"

        def stream(self, task, ctx):
            seen["ctx"], seen["task"] = ctx, task
            return LLMAgent("kitchen_expert", llm=ScriptedLLM(["Boil it."])).stream(task, ctx)

    llm = ScriptedLLM(["handoff_to_kitchen_expert", '{"reason": "cooking"}'])
    front = LLMAgent("front", tools=[], handoffs=[Specialist()], llm=llm, decoder=TwoStageDecoder())
    outer = AgentContext(bus=bus, blackboard=board, session_id="s1")
    result = front.run("how do I cook pasta?", outer)
    ctx = seen["ctx"]
    assert ctx.bus is bus and ctx.blackboard is board and ctx.session_id == "s1"
    assert ctx.agent_name == "kitchen_expert" and ctx.depth == outer.depth + 1
    assert "user now asks: how do I cook pasta?" in ctx.handoff_brief
    assert result.handoff == "kitchen_expert" and result.text == "Boil it."
    kinds = [e.kind for e in events]
    assert "agent.handoff" in kinds
    assert any(e.kind == "agent.reply" and e.source == "kitchen_expert" for e in events)


# --- replies after a tool call are words, never the call's JSON ---------------------------------


def _after_move(reply: str, **kwargs):
    """Run one "move 2" turn whose final reply is ``reply``; returns (result, spoken deltas)."""
    moves.clear()
    llm = ScriptedLLM(["move", '{"distance_m": 2}', "none", reply])
    agent = LLMAgent("robot", tools=[move], llm=llm, decoder=TwoStageDecoder(), **kwargs)
    stream = agent.stream("please go ahead a bit", AgentContext())
    deltas = list(stream.text_deltas())
    return stream.result(), deltas, agent


def test_a_reply_that_copies_the_call_json_is_replaced_by_the_tool_result():
    for reply in (
        '{"name": "move", "arguments": {"distance_m": 2}}',
        '  <tool_call>{"name": "move", "arguments": {"distance_m": 2}}</tool_call>',
        '[{"name": "move"}]',
        "```json\n{}\n```",
        "",
        "   ",
    ):
        result, deltas, agent = _after_move(reply)
        assert moves == [2]
        assert result.ok and result.text == "moved 2" and deltas == ["moved 2"], reply
        # ... and the history remembers words, not JSON.
        assert agent.memory.history("default")[-1] == {"role": "assistant", "content": "moved 2"}


def test_a_prose_reply_after_a_tool_call_still_streams():
    result, deltas, _ = _after_move("Done, I moved two meters.")
    assert deltas == ["Done,", " I", " moved", " two", " meters."] and result.text == "Done, I moved two meters."


def test_a_tool_without_words_falls_back_to_a_neutral_sentence():
    @tool
    def beep() -> dict:
        """Beep once."""
        return {"ok": True}

    llm = ScriptedLLM(["beep", "none", '{"name": "beep", "arguments": {}}'])
    agent = LLMAgent("robot", tools=[beep], llm=llm, decoder=TwoStageDecoder())
    result = agent.run("beep please")
    assert result.tool_calls[0].ok and result.text == "Done."
    assert "Result: ok: True." in llm.calls[-1].messages[-1]["content"]


def test_a_reply_without_a_tool_call_that_starts_with_a_brace_is_kept_whole():
    llm = ScriptedLLM(["{curly} braces are fun."])
    result = LLMAgent("chat", llm=llm).run("say something")
    assert result.text == "{curly} braces are fun."


# --- a failed turn never poisons the next one ----------------------------------------------------


def _window_llm(max_chars: int):
    from edgevox.errors import EngineError

    def reply(messages, _grammar):
        prompt = "".join(m["content"] for m in messages)
        prompt.encode("utf-8")
        if len(prompt) > max_chars:
            raise EngineError("llama.cpp rejected the request: Requested tokens exceed context window")
        return f"Answer {len(messages)}."

    return ScriptedLLM(reply)


def test_a_failed_turn_is_not_remembered_and_the_next_turn_works():
    from edgevox.agents.memory import MemoryStore

    agent = LLMAgent("chat", "sys", llm=_window_llm(300), memory=MemoryStore(1000))
    assert agent.run("hello").ok
    failed = agent.run("word " * 80)  # fits the memory's limit, not the model's window
    assert not failed.ok and "context window" in failed.error
    assert [m["content"] for m in agent.memory.history("default")] == ["hello", "Answer 2."]
    later = agent.run("and now?")
    assert later.ok and later.text == "Answer 4."


def test_an_over_long_request_gets_one_clear_error_and_the_next_turn_works():
    llm = _window_llm(10_000)
    agent = LLMAgent("robot", "sys", tools=[move], llm=llm)
    result = agent.run("please go forward " * 200)
    assert not result.ok and result.error.startswith("the request is too long (3600 characters")
    assert agent.memory.history("default") == [] and not llm.calls
    assert agent.run("hi there").ok


def test_non_utf8_input_is_cleaned_before_the_model_or_the_history_see_it():
    agent = LLMAgent("chat", "sys", llm=_window_llm(10_000))
    result = agent.run("caf\udce9 \udcff")
    assert result.ok
    assert agent.memory.history("default")[0]["content"] == "caf\ufffd \ufffd"
    assert agent.run("next").ok


@pytest.mark.parametrize(
    "emitted",
    [
        "move(distance_m=2)",
        'functions.move({"distance_m": 2})',
        '<function=move>{"distance_m": 2}</function>',
        '[TOOL_CALLS] [{"name": "move", "arguments": {"distance_m": 2}}]',
        "name: move\narguments:\n  distance_m: 2",
    ],
)
def test_a_reply_after_a_tool_call_in_any_call_format_is_replaced_by_the_tool_result(emitted):
    from edgevox.agents.tool_calls import looks_like_machine_text as _looks_like_machine_text

    assert _looks_like_machine_text(emitted)
    assert not _looks_like_machine_text("I moved two meters forward.")


# --- decoders that build their own system prompt keep the conversation ------------------------


@pytest.mark.parametrize("decoder", [GrammarDecoder(), FreeTextDecoder()], ids=["grammar", "free_text"])
def test_without_instructions_the_model_still_sees_the_users_request(decoder):
    llm = ScriptedLLM(['{"reply": "Sure."}', "Sure."])
    agent = LLMAgent("robot", "", tools=[move], llm=llm, decoder=decoder)
    agent.run("please go ahead a bit")
    messages = llm.calls[0].messages
    assert messages[0]["role"] == "system" and "move" in messages[0]["content"]
    assert messages[-1] == {"role": "user", "content": "please go ahead a bit"}


@pytest.mark.parametrize("decoder", [GrammarDecoder(), FreeTextDecoder()], ids=["grammar", "free_text"])
def test_a_handoff_target_with_its_own_decoder_sees_the_previous_agents_context(decoder):
    target_llm = ScriptedLLM(['{"reply": "Boil it."}', "Boil it."])
    expert = LLMAgent("kitchen", "You cook.", tools=[move], llm=target_llm, decoder=decoder)
    front = LLMAgent(
        "front", handoffs=[expert], llm=ScriptedLLM(["handoff_to_kitchen", "{}"]), decoder=TwoStageDecoder()
    )
    result = front.run("how do I cook pasta?")
    assert result.handoff == "kitchen"
    system = target_llm.calls[0].messages[0]
    assert system["role"] == "system" and system["content"].startswith("You cook.\nContext from the previous agent:")
    assert "user now asks: how do I cook pasta?" in system["content"]


# --- several tool calls in one message ----------------------------------------------------------


def test_every_call_of_a_multi_call_message_runs_in_order():
    moves.clear()
    both = '[{"name": "move", "arguments": {"distance_m": 1}}, {"name": "move", "arguments": {"distance_m": 2}}]'
    llm = ScriptedLLM([both])
    agent = LLMAgent("robot", tools=[move], llm=llm, decoder=FreeTextDecoder(), speak_tool_results=True)
    result = agent.run("go one meter then two")
    assert moves == [1, 2]
    assert [tr.call.arguments for tr in result.tool_calls] == [{"distance_m": 1}, {"distance_m": 2}]
    assert result.text == "moved 1 moved 2"


def test_calls_past_max_tool_hops_are_refused_visibly_not_dropped(recorded):
    bus, events = recorded
    moves.clear()
    three = "".join(f'<tool_call>{{"name": "move", "arguments": {{"distance_m": {d}}}}}</tool_call>' for d in (1, 2, 3))
    llm = ScriptedLLM([three, "I moved twice."])
    agent = LLMAgent("robot", tools=[move], llm=llm, decoder=FreeTextDecoder(), max_tool_hops=2)
    result = agent.run("go one, two and three meters", AgentContext(bus=bus))
    assert moves == [1, 2]
    assert [tr.ok for tr in result.tool_calls] == [True, True, False]
    refused = result.tool_calls[2]
    assert refused.call.arguments == {"distance_m": 3} and refused.error_kind == "not_run"
    assert refused.error == "not run because the turn already made 2 tool calls (max_tool_hops)"
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert [e.error_kind for e in finished] == ["", "", "not_run"]
    assert "The move tool was not run because" in llm.calls[-1].messages[-1]["content"]
    assert result.text == "I moved twice."


# --- what the constructor accepts ----------------------------------------------------------------


def test_tools_none_means_no_tools():
    agent = LLMAgent("chat", tools=None, skills=None, handoffs=None, hooks=None, llm=ScriptedLLM(["Hi."]))
    assert agent.tools == [] and agent.run("hello").text == "Hi."


@pytest.mark.parametrize("what", ["tools", "skills", "handoffs"])
def test_a_string_instead_of_a_list_is_refused_with_one_clear_line(what):
    with pytest.raises(
        TypeError, match=rf"^agent 'robot': {what} must be a list, got str 'move'; write {what}=\[...\]$"
    ):
        LLMAgent("robot", **{what: "move"})


def test_deps_must_be_a_mapping():
    with pytest.raises(TypeError, match=r"^agent 'robot': deps must be a mapping .*got list"):
        LLMAgent("robot", deps=["camera"])
    agent = LLMAgent("robot", deps={"camera": "cam0"}, llm=ScriptedLLM(["ok"]))
    assert agent.run("hi").ok
    with pytest.raises(TypeError, match=r"^agent 'robot': ctx.deps must be a mapping, got list"):
        agent.run("hi", AgentContext(deps=["camera"]))
