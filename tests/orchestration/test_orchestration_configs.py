"""Every example config in configs/orchestration loads, builds real agents over a scripted
LLM, and answers deterministically through its strategy."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgevox.config import load_config
from edgevox.config.build import make_agents
from edgevox.errors import ConfigError
from edgevox.orchestration import (
    Coordinator,
    Loop,
    OrchestrationConfig,
    Pipeline,
    Supervisor,
    Swarm,
    build_orchestration,
)
from edgevox.runtime.context import AgentContext
from edgevox.testing.fake_engines import ScriptedLLM

CONFIGS = Path(__file__).resolve().parents[2] / "configs" / "orchestration"


def build(name, reply, *, whole_conversation=False):
    """``reply(system, text)``: text is the last message, or every message after the system one."""
    app = load_config(CONFIGS / name)

    def answer(messages, grammar):
        rest = messages[1:] if whole_conversation else messages[-1:]
        return reply(messages[0]["content"], "\n".join(m["content"] for m in rest))

    llm = ScriptedLLM(answer)
    agents = make_agents(app, llm)
    return build_orchestration(app.orchestration, agents, main_agent=app.main_agent), llm


def test_every_example_config_is_covered():
    assert sorted(p.name for p in CONFIGS.glob("*.yaml")) == [
        "home_swarm.yaml",
        "research_supervisor.yaml",
        "support_pipeline.yaml",
        "writer_review_loop.yaml",
    ]


def test_support_pipeline_config():
    def reply(system, last):
        if system.startswith("Name the kind"):
            return "hardware"
        if system.startswith("You get a user request"):
            return "Restart the robot." if "triage said: hardware" in last else "?"
        return "Please restart me." if "handler said: Restart the robot." in last else "?"

    coord, _ = build("support_pipeline.yaml", reply)
    assert isinstance(coord.strategy_for("x"), Pipeline)
    result = coord.run("my wheel is stuck", AgentContext(session_id="u"))
    assert result.text == "Please restart me."


def test_research_supervisor_config():
    def reply(system, last):
        if system.startswith("You know the house"):
            return "Kitchen, down the hall."
        if system.startswith("You check safety"):
            return "Mind the wet floor."
        if "navigator: Kitchen, down the hall." in last and "safety: Mind the wet floor." in last:
            return "Go down the hall to the kitchen and mind the wet floor."
        return "?"

    coord, _ = build("research_supervisor.yaml", reply)
    sup = coord.strategy_for("x")
    assert isinstance(sup, Supervisor) and sup.strategy == "parallel"
    result = coord.run("where can I get water?", AgentContext(session_id="u"))
    assert result.text == "Go down the hall to the kitchen and mind the wet floor."
    assert sup.close() == []


def test_writer_review_loop_config():
    def reply(system, last):
        if system.startswith("Write the short"):
            return "Dinner is at seven, please be on time." if "Reviewer feedback" in last else "DINNER AT 7!!!"
        if system.startswith("Review the answer. If it is polite"):
            return "Too shouty." if "!!!" in last else "APPROVED"
        return "APPROVED"

    coord, _ = build("writer_review_loop.yaml", reply)
    assert isinstance(coord.strategy_for("x"), Loop)
    result = coord.run("announce dinner at seven", AgentContext(session_id="u"))
    raw = result.steps[0]
    assert result.text == "Dinner is at seven, please be on time."
    assert (raw.data["approved"], raw.data["iteration"]) == (True, 2)


def test_home_swarm_config_hands_off_through_the_real_tool_and_overrides_per_session():
    def reply(system, last):
        if system.startswith("You greet"):
            return "Our chef will help you."
        return "Boil the pasta for ten minutes." if "pasta" in last else "Ask me about food."

    coord, llm = build("home_swarm.yaml", reply, whole_conversation=True)
    assert isinstance(coord.strategy_for("anyone"), Swarm)
    assert isinstance(coord.strategy_for("kiosk"), Pipeline)
    # The schema fast path of LLMAgent fills handoff_conversation from the user's words;
    # the handler finds "chef" in them.
    result = coord.run("please hand the conversation to the chef, I want pasta", AgentContext(session_id="u"))
    swarm_result = result.steps[0]
    assert swarm_result.agent == "chef" and result.text == "Boil the pasta for ten minutes."
    chef_first = [s for s in swarm_result.steps if s.agent == "chef"][0]
    assert chef_first.ok
    # The next turn stays with the chef (the swarm remembers the session's agent).
    again = coord.run("how much salt?", AgentContext(session_id="u"))
    assert again.steps[0].agent == "chef"
    # Another session starts at the entry agent.
    other = coord.run("hello", AgentContext(session_id="v"))
    assert other.steps[0].agent == "concierge"


def test_unknown_agent_in_orchestration_is_a_config_error_with_a_hint():
    cfg = OrchestrationConfig.model_validate({"strategy": "pipeline", "pipeline": {"agents": ["triage", "handlr"]}})
    with pytest.raises(ConfigError, match="did you mean 'handler'"):
        build_orchestration(cfg, {"triage": object(), "handler": object()})


def test_strategy_without_its_section_is_rejected():
    with pytest.raises(ValueError, match="no `loop:` section"):
        OrchestrationConfig.model_validate({"strategy": "loop"})
    with pytest.raises(ValueError, match="pipelin"):
        OrchestrationConfig.model_validate({"strategy": "pipeline", "pipelin": {"agents": ["a"]}})


def test_conversation_strategy_builds_router_and_handoff_rules(Scripted):
    cfg = {
        "strategy": "conversation",
        "conversation": {
            "stages": [{"phase": "intake", "agent": "triage"}, {"phase": "handling", "agent": "handler"}],
            "aliases": {"support": "handler"},
            "supervisor": "boss",
        },
    }
    agents = {n: Scripted(n, f"{n} ok") for n in ("triage", "handler", "boss")}
    coord = build_orchestration(cfg, agents)
    assert isinstance(coord, Coordinator) and coord.strategy_for("s") is None
    assert coord.run("hi", AgentContext(session_id="s")).agent == "triage"
    assert agents["boss"].tasks and "triage: triage ok" in agents["boss"].tasks[0]
    assert coord.handoff.resolve("Support") == "handler"
