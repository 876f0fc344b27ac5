"""``agents.<name>.decoder``: how a YAML agent decides to call a tool. The default acts on what
the user's words name; ``two_stage`` lets the model decide, which an orchestration agent that
hands off or delegates on its own judgement needs."""

from __future__ import annotations

import json

import pytest

from edgevox.agents.base import AgentBase, AgentStream
from edgevox.agents.decoders import SchemaFirstDecoder, TwoStageDecoder
from edgevox.config import parse_config
from edgevox.config.build import make_agents
from edgevox.errors import ConfigError
from edgevox.testing import ScriptedLLM

CONFIG = """\
agents:
  judge:
    instructions: You decide.
    tools: [cfg_sample_tools:greet]
    decoder: two_stage
  literal:
    instructions: You act on words.
    tools: [cfg_sample_tools:greet]
"""


@pytest.fixture(autouse=True)
def _sample_tools_importable(monkeypatch):
    from pathlib import Path

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent))


def model(messages, grammar):
    if grammar and '"none"' in grammar:
        return "greet"
    if grammar:
        return json.dumps({"name": "Ana"})
    return "Done."


def test_a_two_stage_agent_lets_the_model_call_a_tool_the_words_do_not_name():
    agents = make_agents(parse_config(CONFIG, env={}), ScriptedLLM(model))
    assert isinstance(agents["judge"].decoder, TwoStageDecoder)
    assert isinstance(agents["literal"].decoder, SchemaFirstDecoder)
    # "Ana just arrived" names no action: the schema-first agent answers in words, the
    # two-stage agent asks the model, which calls the tool.
    judged = agents["judge"].run("Ana just arrived.")
    assert [(r.call.name, r.ok) for r in judged.tool_calls] == [("greet", True)]
    assert agents["literal"].run("Ana just arrived.").tool_calls == []


def test_an_unknown_decoder_is_one_line_naming_the_choices():
    with pytest.raises(ConfigError, match="agents.a.decoder") as err:
        parse_config("agents:\n  a: {decoder: two-stage}\n", env={})
    assert "two_stage" in str(err.value) and "\n" not in str(err.value)


class Plain(AgentBase):
    """An agent that is no LLMAgent: it has no decoder to set."""

    name = "plain"

    def stream(self, task, ctx=None):
        return AgentStream(iter(()))


def make_plain_agent(llm):
    return Plain()


def test_a_factory_agent_without_a_decoder_setting_is_refused():
    text = "agents:\n  a: {factory: 'test_agent_decoder:make_plain_agent', decoder: two_stage}\n"
    with pytest.raises(ConfigError, match="agents.a.decoder: the agent built by test_agent_decoder:make_plain_agent"):
        make_agents(parse_config(text, env={}), ScriptedLLM(model))
