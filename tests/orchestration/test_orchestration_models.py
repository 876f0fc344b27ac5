"""The example configs run with the embedded SmolLM2-135M model (one turn each)."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgevox.config import load_config
from edgevox.config.build import make_agents, make_llm
from edgevox.orchestration import build_orchestration
from edgevox.runtime.context import AgentContext

CONFIGS = Path(__file__).resolve().parents[2] / "configs" / "orchestration"

pytestmark = [pytest.mark.models, pytest.mark.slow]


@pytest.fixture(scope="module")
def llm():
    # Every example names the same embedded model; load it once for the module.
    return make_llm(load_config(CONFIGS / "support_pipeline.yaml").llm)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("support_pipeline.yaml", "My wheel makes a grinding noise."),
        ("research_supervisor.yaml", "Where can I get a glass of water?"),
        ("writer_review_loop.yaml", "Announce that dinner is at seven."),
        ("home_swarm.yaml", "please hand the conversation to the chef, I want pasta"),
    ],
)
def test_example_config_answers_with_the_embedded_model(llm, name, text):
    app = load_config(CONFIGS / name)
    # Keep CI time down: short replies and one review round are enough to prove the wiring.
    app.llm.max_tokens = 24
    if app.orchestration.loop is not None:
        app.orchestration.loop.max_iterations = 1
    coord = build_orchestration(app.orchestration, make_agents(app, llm), main_agent=app.main_agent)
    result = coord.run(text, AgentContext(session_id="models"))
    assert result.ok, result.error
    assert result.text.strip()
    raw = result.steps[0]
    if name == "writer_review_loop.yaml":
        assert raw.data["iteration"] >= 1 and raw.data["approved"] in (True, False)
    if name == "research_supervisor.yaml":
        assert {s.agent for s in raw.steps} == {"planner"}  # workers ran through the delegator
        assert coord.strategy_for("x").delegator.registry.stats()["completed"] == 2
        assert coord.strategy_for("x").close() == []
    if name == "home_swarm.yaml":
        assert raw.agent == "chef"  # the handoff went through with the real agents
