"""ChatAgent memory: bounded, and trimmed in blocks so the LLM's prompt cache stays valid."""

from __future__ import annotations

import pytest

from edgevox.runtime.context import AgentContext
from edgevox.testing import ScriptedLLM
from edgevox.voice.chat_agent import ChatAgent


def test_history_is_trimmed_in_blocks_so_the_prompt_only_grows_between_trims():
    llm = ScriptedLLM(lambda messages, _grammar: f"Reply {len(messages)}.")
    agent = ChatAgent(llm, max_history_turns=4)
    ctx = AgentContext(session_id="s")
    for i in range(20):
        assert "".join(agent.stream(f"question {i}", ctx)).startswith("Reply")
        assert len(agent.history("s")) <= 2 * 4
    prompts = [call.messages for call in llm.calls]
    breaks = [i for i in range(1, len(prompts)) if prompts[i][: len(prompts[i - 1])] != prompts[i - 1]]
    # A sliding window would break the cached prefix on every turn once full (from turn 5 on);
    # block trimming breaks it once every max_history_turns // 2 = 2 turns.
    assert len(breaks) <= 8
    assert all(b - a >= 2 for a, b in zip(breaks, breaks[1:], strict=False))
    for messages in prompts:
        assert messages[0]["role"] == "system" and messages[1]["role"] == "user"
    # The last exchanges are always kept, the newest question last.
    assert prompts[-1][-1] == {"role": "user", "content": "question 19"}
    assert {"role": "user", "content": "question 18"} in prompts[-1]


def test_history_is_per_session_and_truncate_reply_keeps_what_was_spoken():
    agent = ChatAgent(ScriptedLLM(default="One. Two. Three."))
    a, b = AgentContext(session_id="a"), AgentContext(session_id="b")
    "".join(agent.stream("count", a))
    assert agent.history("b") == []
    agent.truncate_reply(a, "One.")
    assert agent.history("a") == [{"role": "user", "content": "count"}, {"role": "assistant", "content": "One."}]
    "".join(agent.stream("hello", b))
    assert len(agent.history("b")) == 2


def test_invalid_history_size_is_rejected():
    with pytest.raises(ValueError, match="max_history_turns"):
        ChatAgent(ScriptedLLM(), max_history_turns=0)


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
    from edgevox.errors import EngineError

    agent = ChatAgent(_context_window_llm(max_chars=400), system_prompt="sys", max_input_tokens=1000)
    ctx = AgentContext(session_id="s")
    assert "".join(agent.stream("hello", ctx)) == "Answer 2."
    with pytest.raises(EngineError, match="context window"):
        "".join(agent.stream("word " * 100, ctx))  # fits the input limit, not the model's window
    assert agent.history("s") == [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "Answer 2."}]
    assert "".join(agent.stream("and now?", ctx)) == "Answer 4."


def test_an_over_long_request_is_refused_with_one_clear_error_and_the_next_turn_works():
    from edgevox.errors import AgentError

    llm = _context_window_llm()
    agent = ChatAgent(llm, system_prompt="sys", max_input_tokens=50)
    ctx = AgentContext(session_id="s")
    for _ in range(2):
        with pytest.raises(AgentError, match="too long .*max_input_tokens"):
            "".join(agent.stream("blah " * 60, ctx))
    assert agent.history("s") == [] and not llm.calls
    assert "".join(agent.stream("hi", ctx)) == "Answer 2."


def test_non_utf8_input_is_cleaned_not_fatal():
    agent = ChatAgent(_context_window_llm(), system_prompt="sys")
    ctx = AgentContext(session_id="s")
    assert "".join(agent.stream("caf\udce9 \udcff", ctx)) == "Answer 2."  # surrogateescape'd Latin-1
    assert agent.history("s")[0] == {"role": "user", "content": "caf\ufffd \ufffd"}
    assert "".join(agent.stream("caf\udcc3\udca9", ctx)) == "Answer 4."  # surrogateescape'd UTF-8
    assert agent.history("s")[2]["content"] == "café"


def test_a_barge_in_still_keeps_the_request_and_what_was_said():
    agent = ChatAgent(ScriptedLLM(default="One. Two. Three."), system_prompt="sys")
    ctx = AgentContext(session_id="s")
    pieces = agent.stream("count", ctx)
    assert next(pieces) == "One."
    pieces.close()  # the loop stops reading
    assert agent.history("s") == [{"role": "user", "content": "count"}, {"role": "assistant", "content": "One."}]
