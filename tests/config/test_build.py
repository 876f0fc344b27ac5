"""Config -> objects: references, triggers and custom engines."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgevox.agents.llm_agent import LLMAgent
from edgevox.config import parse_config
from edgevox.config.build import TemplateTrigger, make_agents, make_llm, resolve_tools
from edgevox.config.refs import import_ref
from edgevox.errors import ConfigError
from edgevox.testing import ScriptedLLM
from edgevox.voice.events import TranscriptEvent

HERE = Path(__file__).resolve().parent


@pytest.fixture(autouse=True)
def _sample_tools_importable(monkeypatch):
    monkeypatch.syspath_prepend(str(HERE))


def test_a_reference_to_a_missing_module_names_the_key_and_the_module():
    with pytest.raises(
        ConfigError, match=r"^agents.a.tools.0: cannot import 'nope_mod:move': no module named 'nope_mod'"
    ):
        import_ref("nope_mod:move", where="agents.a.tools.0")


def test_a_reference_to_a_missing_attribute_suggests_the_nearest_name():
    with pytest.raises(ConfigError, match=r"json has no attribute 'dumpz'; did you mean 'dump'\?"):
        import_ref("json:dumpz", where="w")


def test_tools_resolve_from_tool_objects_lists_and_plain_functions():
    tools = resolve_tools(["cfg_sample_tools:greet", "cfg_sample_tools:TOOLS"], where="agents.a.tools")
    assert [t.name for t in tools] == ["greet", "add", "wave"]
    assert tools[0].parameters["required"] == ["name"]


def test_a_reference_that_is_not_callable_cannot_be_a_tool():
    with pytest.raises(ConfigError, match="is a int, not a function or a @tool"):
        resolve_tools(["cfg_sample_tools:NOT_A_TOOL"], where="agents.a.tools")


def test_a_task_template_is_filled_from_the_event_fields():
    trigger = TemplateTrigger("The user said {text!r} (turn {turn_id}).")
    assert trigger(TranscriptEvent(text="hello", turn_id=3)) == "The user said 'hello' (turn 3)."
    assert TemplateTrigger("{missing}")(TranscriptEvent(text="x")) is None
    # A field of another type than the template's format expects (a peer sent text) is missing, not a crash.
    numeric = TemplateTrigger("Battery at {turn_id:d} percent.")
    assert numeric(TranscriptEvent(text="x", turn_id="low")) is None  # type: ignore[arg-type]
    assert numeric.missing == 1


def test_a_custom_llm_engine_is_built_from_a_reference_with_its_options():
    cfg = parse_config("llm:\n  engine: edgevox.testing:ScriptedLLM\n  options: {default: hi}\n", env={})
    llm = make_llm(cfg.llm)
    assert isinstance(llm, ScriptedLLM) and llm.default == "hi"


def test_an_unknown_builtin_engine_lists_the_known_ones():
    cfg = parse_config("llm:\n  engine: vllm\n", env={})
    with pytest.raises(ConfigError, match="llm.engine = 'vllm': unknown engine; use one of llama-cpp"):
        make_llm(cfg.llm)


def test_agents_without_tools_are_chat_agents_with_their_instructions():
    cfg = parse_config("agents:\n  helper:\n    instructions: Be brief.\n    max_tokens: 7\n", env={})
    agents = make_agents(cfg, ScriptedLLM(default="ok"))
    assert isinstance(agents["helper"], LLMAgent) and not agents["helper"].tools
    assert agents["helper"].instructions == "Be brief."
    assert agents["helper"].reply_max_tokens == 7


def test_speak_tool_results_is_set_from_yaml_for_tool_agents_and_factory_agents():
    text = """\
agents:
  quiet:
    tools: ["cfg_sample_tools:wave"]
    speak_tool_results: false
  talky:
    tools: ["cfg_sample_tools:wave"]
    speak_tool_results: true
  default:
    tools: ["cfg_sample_tools:wave"]
  robot:
    factory: edgevox.examples.home_robot:build_home_robot_agent
    speak_tool_results: false
  robot_default:
    factory: edgevox.examples.home_robot:build_home_robot_agent
"""
    agents = make_agents(parse_config(text, env={}), ScriptedLLM(default="ok"))
    assert agents["quiet"].speak_tool_results is False and agents["talky"].speak_tool_results is True
    assert agents["default"].speak_tool_results is True  # config agents say their tool's own sentence
    assert agents["robot"].speak_tool_results is False
    assert agents["robot_default"].speak_tool_results is True  # the factory's own default


def test_speak_tool_results_on_a_factory_agent_without_that_setting_is_a_config_error():
    text = "agents:\n  helper:\n    factory: builtins:dict\n    speak_tool_results: true\n"
    with pytest.raises(ConfigError, match=r"agents.helper.speak_tool_results: the agent built by"):
        make_agents(parse_config(text, env={}), ScriptedLLM(default="ok"))
