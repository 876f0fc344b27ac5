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
