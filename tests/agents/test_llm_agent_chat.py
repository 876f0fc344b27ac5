"""LLMAgent without tools is the chat agent (it was ``voice.ChatAgent``): memory per session,
bounded, trimmed in blocks so the LLM's prompt cache stays valid, and after a barge-in it keeps
what was actually spoken."""

from __future__ import annotations

import pytest

from edgevox.agents.llm_agent import DEFAULT_SYSTEM_PROMPT, LLMAgent
from edgevox.agents.memory import MemoryStore
from edgevox.runtime.context import AgentContext
from edgevox.testing import ScriptedLLM


def say(agent: LLMAgent, text: str, ctx: AgentContext) -> str:
    return "".join(agent.stream(text, ctx).text_deltas())


def test_history_is_trimmed_in_blocks_so_the_prompt_only_grows_between_trims():
    llm = ScriptedLLM(lambda messages, _grammar: f"Reply {len(messages)}.")
    agent = LLMAgent("chat", llm=llm, memory=MemoryStore(count_tokens=llm.count_tokens, max_turns=4))
    ctx = AgentContext(session_id="s")
    for i in range(20):
        assert say(agent, f"question {i}", ctx).startswith("Reply")
        assert len(agent.history("s")) <= 2 * 4
    prompts = [call.messages for call in llm.calls]
    breaks = [i for i in range(1, len(prompts)) if prompts[i][: len(prompts[i - 1])] != prompts[i - 1]]
    # A sliding window would break the cached prefix on every turn once full (from turn 5 on);
    # block trimming breaks it once every few turns.
    assert len(breaks) <= 8
    assert all(b - a >= 2 for a, b in zip(breaks, breaks[1:], strict=False))
    for messages in prompts:
        assert messages[0]["role"] == "system" and messages[1]["role"] == "user"
    # The last exchanges are always kept, the newest question last.
    assert prompts[-1][-1] == {"role": "user", "content": "question 19"}
    assert {"role": "user", "content": "question 18"} in prompts[-1]


def test_the_chat_agent_has_the_voice_system_prompt_by_default():
    llm = ScriptedLLM(default="Hi.")
    say(LLMAgent("chat", llm=llm), "hello", AgentContext())
    assert llm.calls[0].messages == [
        {"role": "system", "content": DEFAULT_SYSTEM_PROMPT},
        {"role": "user", "content": "hello"},
    ]


def test_history_is_per_session_and_truncate_reply_keeps_what_was_spoken():
    agent = LLMAgent("chat", llm=ScriptedLLM(default="One. Two. Three."))
    a, b = AgentContext(session_id="a"), AgentContext(session_id="b")
    say(agent, "count", a)
    assert agent.history("b") == []
    agent.truncate_reply(a, "One.")
    assert agent.history("a") == [{"role": "user", "content": "count"}, {"role": "assistant", "content": "One."}]
    say(agent, "hello", b)
    assert len(agent.history("b")) == 2


def test_a_reply_nobody_heard_is_removed_and_the_next_prompt_merges_the_user_messages():
    llm = ScriptedLLM(default="One. Two. Three.")
    agent = LLMAgent("chat", "sys", llm=llm)
    ctx = AgentContext(session_id="s")
    say(agent, "count", ctx)
    agent.truncate_reply(ctx, "  ")  # cut off before any audio played
    assert agent.history("s") == [{"role": "user", "content": "count"}]
    say(agent, "slower please", AgentContext(session_id="s"))
    assert llm.calls[-1].messages == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "count\nslower please"},
    ]


def test_truncate_reply_after_a_failed_turn_leaves_the_earlier_answer_alone():
    agent = LLMAgent("chat", "sys", llm=_context_window_llm(max_chars=60))
    first = AgentContext(session_id="s")
    say(agent, "hello", first)
    failed = AgentContext(session_id="s")
    assert not agent.run("word " * 20, failed).ok
    agent.truncate_reply(failed, "")  # the loop reports the failed turn as cut with nothing heard
    assert agent.history("s") == [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "Answer 2."}]


def test_invalid_history_size_is_rejected():
    with pytest.raises(ValueError, match="max_turns"):
        MemoryStore(max_turns=0)


def _context_window_llm(max_chars: int = 400) -> ScriptedLLM:
    """A fake that fails like llama.cpp when the prompt overflows, or is not encodable text."""
    from edgevox.errors import EngineError

    def reply(messages, _grammar):
        prompt = "".join(m["content"] for m in messages)
        prompt.encode("utf-8")  # a lone surrogate raises UnicodeEncodeError, as in the tokenizer
        if len(prompt) > max_chars:
            raise EngineError("llama.cpp rejected the request: Requested tokens exceed context window")
        return f"Answer {len(messages)}."

    return ScriptedLLM(reply)


def test_a_failed_turn_leaves_no_trace_and_the_next_turn_works():
    llm = _context_window_llm(max_chars=400)
    agent = LLMAgent("chat", "sys", llm=llm, memory=MemoryStore(count_tokens=llm.count_tokens, max_input_tokens=1000))
    ctx = AgentContext(session_id="s")
    assert say(agent, "hello", ctx) == "Answer 2."
    failed = agent.run("word " * 100, ctx)  # fits the input limit, not the model's window
    assert not failed.ok and "context window" in failed.error
    assert agent.history("s") == [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "Answer 2."}]
    assert say(agent, "and now?", ctx) == "Answer 4."


def test_an_over_long_request_is_refused_with_one_clear_error_and_the_next_turn_works():
    llm = _context_window_llm()
    agent = LLMAgent("chat", "sys", llm=llm, memory=MemoryStore(count_tokens=llm.count_tokens, max_input_tokens=50))
    ctx = AgentContext(session_id="s")
    for _ in range(2):
        result = agent.run("blah " * 60, ctx)
        assert not result.ok
        assert result.error.startswith("the request is too long (300 characters")
        assert "max_input_tokens" in result.error
    assert agent.history("s") == [] and not llm.calls
    assert say(agent, "hi", ctx) == "Answer 2."


def test_non_utf8_input_is_cleaned_not_fatal():
    agent = LLMAgent("chat", "sys", llm=_context_window_llm())
    ctx = AgentContext(session_id="s")
    assert say(agent, "caf\udce9 \udcff", ctx) == "Answer 2."  # surrogateescape'd Latin-1
    assert agent.history("s")[0] == {"role": "user", "content": "caf\ufffd \ufffd"}
    assert say(agent, "caf\udcc3\udca9", ctx) == "Answer 4."  # surrogateescape'd UTF-8
    assert agent.history("s")[2]["content"] == "café"


def test_a_barge_in_still_keeps_the_request_and_what_was_said():
    agent = LLMAgent("chat", "sys", llm=ScriptedLLM(default="One. Two. Three."))
    ctx = AgentContext(session_id="s")
    stream = agent.stream("count", ctx)
    assert next(stream.text_deltas()) == "One."
    stream.close()  # the loop stops reading
    assert agent.history("s") == [{"role": "user", "content": "count"}, {"role": "assistant", "content": "One."}]


def test_warmup_evaluates_the_system_prompt():
    class WarmLLM(ScriptedLLM):
        warmed: list[str] = []

        def warmup(self, system_prompt: str = "") -> float:
            self.warmed.append(system_prompt)
            return 0.0

    llm = WarmLLM()
    LLMAgent("chat", "Be brief.", llm=llm).warmup()
    assert llm.warmed == ["Be brief."] and not llm.calls
    plain = ScriptedLLM(default="Hello there.")
    LLMAgent("chat", "Be brief.", llm=plain).warmup()  # any engine: one token of the same prompt start
    assert plain.calls[0].messages[0] == {"role": "system", "content": "Be brief."}
    assert plain.calls[0].tokens_yielded == 1
