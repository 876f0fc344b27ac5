"""Every example config runs with the embedded SmolLM2-135M model (one turn each, short
replies): the wiring from YAML to real agents, real tool decisions and a real answer. What the
model says is not asserted, only what each pattern guarantees whatever it says."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgevox.config import load_config
from edgevox.config.build import make_agents, make_llm, make_llms
from edgevox.orchestration import Supervisor, build_orchestration
from edgevox.runtime.blackboard import Blackboard
from edgevox.runtime.bus import EventBus
from edgevox.runtime.context import AgentContext

CONFIGS = Path(__file__).resolve().parents[2] / "configs" / "orchestration"

pytestmark = [pytest.mark.models, pytest.mark.slow]


@pytest.fixture(scope="module")
def llm():
    # Every example's `llm:` names the same embedded model: load it once for the module.
    engine = make_llm(load_config(CONFIGS / "support_pipeline.yaml").llm)
    yield engine
    engine.close()


TURNS = [
    ("support_pipeline.yaml", "My wheel makes a grinding noise.", {}),
    ("home_swarm.yaml", "How do I cook pasta?", {}),
    ("phased_conversation.yaml", "My printer jams every morning.", {}),
    ("supervisor_decides.yaml", "Where are my keys?", {}),
    ("research_supervisor.yaml", "Where can I get a glass of water?", {}),
    ("voice_supervisor.yaml", "Please check the kitchen for obstacles.", {}),
    ("writer_review_loop.yaml", "Announce that dinner is at seven.", {}),
    ("delegation.yaml", "Where is the vacuum cleaner?", {}),
    ("routing_rules.yaml", "Battery status?", {"channel": "ros2"}),
    ("per_agent_models.yaml", "Where can I get a glass of water?", {}),
]


def test_every_example_config_is_run_with_the_model():
    assert sorted(name for name, _, _ in TURNS) == sorted(p.name for p in CONFIGS.glob("*.yaml"))


@pytest.mark.parametrize(("name", "text", "ctx"), TURNS, ids=[t[0] for t in TURNS])
def test_example_config_answers_with_the_embedded_model(llm, name, text, ctx):
    app = load_config(CONFIGS / name)
    app.llm.max_tokens = 16  # keep CI time down: short replies prove the wiring
    if app.orchestration.loop is not None:
        app.orchestration.loop.max_iterations = 1
    llms = make_llms(app, main=llm)  # agents naming other load options get their own engine
    extra = {id(e): e for e in llms.values() if e is not llm}
    bus, blackboard = EventBus("models"), Blackboard()
    try:
        coord = build_orchestration(
            app.orchestration,
            make_agents(app, llm, llms=llms),
            main_agent=app.main_agent,
            bus=bus,
            blackboard=blackboard,
        )
        result = coord.run(text, AgentContext(session_id="models", bus=bus, **ctx))
        assert result.text.strip()
        # A 135M model may hand a swarm's turn back and forth until the cap: the user still hears
        # an answer; any other failure is a broken example.
        assert result.ok or (name == "home_swarm.yaml" and "handoffs in one turn" in result.error), result.error
        strategy = coord.strategy_for("models")
        raw = result.steps[0] if result.steps else result
        if name == "support_pipeline.yaml":
            assert result.agent == "triage"  # the chain's first stage holds a new session
        if name == "home_swarm.yaml":
            assert raw.agent in ("concierge", "chef")
        if name == "phased_conversation.yaml":
            assert result.agent == "receptionist"  # the intake phase answers first
        if name == "supervisor_decides.yaml":
            assert isinstance(strategy, Supervisor) and strategy.strategy is None and result.agent == "butler"
        if name in ("research_supervisor.yaml", "per_agent_models.yaml"):
            assert isinstance(strategy, Supervisor)
            assert strategy.delegator.registry.stats()["completed"] == 2  # both workers answered
            assert strategy.close() == []
        if name == "voice_supervisor.yaml":
            assert isinstance(strategy, Supervisor) and result.agent == "host"
            # A delegation the model started runs its team in the background (seconds on a busy
            # CPU): wait for it to end, so it cannot outlive the test.
            assert strategy.close(120.0) == []
        if name == "writer_review_loop.yaml":
            assert raw.data["iteration"] == 1 and raw.data["approved"] in (True, False)
        if name == "delegation.yaml":
            assert result.agent == "assistant"
        if name == "routing_rules.yaml":
            assert result.agent == "operator"  # a ros2 turn, by the lowest-priority-number rule
        if name == "per_agent_models.yaml":
            # Two engines in one process: the planner on llm:, both workers on one 1024-token engine.
            assert len(extra) == 1 and llms["navigator"] is llms["safety"] and llms["navigator"].n_ctx == 1024
    finally:
        for engine in extra.values():
            engine.close()
        blackboard.close()
        assert bus.close() == []
