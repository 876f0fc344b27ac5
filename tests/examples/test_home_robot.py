from __future__ import annotations

import threading
from pathlib import Path

import pytest

from edgevox.agents.evaluation import accuracy, call_matches, evaluate_agent, load_cases
from edgevox.agents.skills import GoalState
from edgevox.agents.tools import ToolCall
from edgevox.examples.home_robot import SimulatedRobot, build_home_robot_agent
from edgevox.runtime.context import AgentContext
from edgevox.testing import ScriptedLLM

HELDOUT = Path(__file__).with_name("home_robot_heldout.jsonl")
FRESH = Path(__file__).with_name("home_robot_fresh.jsonl")
"""A second held-out set, written later (idioms, unit conversions, statements that name a room)."""
DEV = Path(__file__).resolve().parents[2].parent / "shared" / "evals" / "home_robot_tools.dev.jsonl"


@pytest.fixture
def agent_and_robot():
    robot = SimulatedRobot()
    agent = build_home_robot_agent(ScriptedLLM(default="Sure."), robot)
    yield agent, robot
    agent.close()


def test_agent_has_exactly_the_eight_tools_with_the_required_signatures(agent_and_robot):
    agent, _ = agent_and_robot
    tools = {t.name: t.parameters for t in agent.tools}
    assert list(tools) == ["move", "turn", "go_to", "stop", "get_battery", "set_light", "pick_up", "set_timer"]
    assert tools["move"]["properties"]["distance_m"]["type"] == "number"
    assert tools["turn"]["properties"]["direction"]["enum"] == ["left", "right"]
    assert tools["turn"]["properties"]["degrees"]["default"] == 90
    assert tools["go_to"]["properties"]["room"]["enum"][-1] == "charging dock"
    assert "charging dock" not in tools["set_light"]["properties"]["room"]["enum"]
    assert tools["set_light"]["required"] == ["room", "on"]
    assert tools["pick_up"]["properties"]["object"]["type"] == "string"
    assert tools["set_timer"]["properties"]["minutes"]["type"] == "number"
    assert tools["stop"]["properties"] == {} and tools["get_battery"]["properties"] == {}


def test_commands_change_the_simulated_robot(agent_and_robot):
    agent, robot = agent_and_robot
    agent.run("drive forward two meters")
    assert robot.x_m == pytest.approx(2.0)
    agent.run("turn left")
    assert robot.heading_deg == pytest.approx(90)
    agent.run("switch on the kitchen lights")
    assert robot.lights["kitchen"] is True
    agent.run("pick up the red cup")
    assert robot.held_object == "red cup"
    agent.run("set a timer for 5 minutes")
    assert robot.timers[-1].minutes == 5
    assert "percent" in agent.run("how much battery do you have").text


def test_go_to_is_a_skill_that_arrives_or_is_stopped_mid_flight(agent_and_robot):
    agent, robot = agent_and_robot
    result = agent.run("go to the kitchen")
    (goal,) = result.skills
    assert goal.result(10) == "Arrived in the kitchen." and robot.room == "kitchen"

    robot.speed_m_s = 0.01  # slow: the goal is certainly still running when stopped
    ctx = AgentContext()
    moving = agent.run("go to the office", ctx).skills[0]
    driving = threading.Event()
    moving.add_feedback_listener(lambda _f: driving.set())
    assert driving.wait(5)  # the robot is on its way
    assert agent.run("stop").text.startswith("Stopped and cancelled 1")
    assert moving.wait(5) and moving.state is GoalState.CANCELLED
    assert robot.room != "office"


def test_cancelling_the_turn_context_stops_go_to(agent_and_robot):
    agent, robot = agent_and_robot
    robot.speed_m_s = 0.01
    ctx = AgentContext()
    goal = agent.run("navigate to the bathroom", ctx).skills[0]
    ctx.cancel_token.cancel("safety stop")
    assert goal.wait(5) and goal.state is GoalState.CANCELLED


def test_eval_comparison_fills_defaults_and_compares_loosely(agent_and_robot):
    agent, _ = agent_and_robot
    turn = {"name": "turn", "arguments": {"direction": "left", "degrees": 90}}
    assert call_matches(turn, ToolCall("turn", {"direction": "LEFT"}), agent.tools)  # strings case-insensitively
    assert call_matches(turn, ToolCall("turn", {"direction": "left"}), agent.tools)
    assert call_matches(
        {"name": "move", "arguments": {"distance_m": 2}}, ToolCall("move", {"distance_m": 2.0}), agent.tools
    )
    assert call_matches(
        {"name": "pick_up", "arguments": {"object": "Red Cup"}},
        ToolCall("pick_up", {"object": "red cup "}),
        agent.tools,
    )
    assert not call_matches(None, ToolCall("stop", {}), agent.tools) and call_matches(None, None, agent.tools)
    assert not call_matches(
        {"name": "set_light", "arguments": {"room": "office", "on": True}},
        ToolCall("set_light", {"room": "office", "on": 1}),
        agent.tools,
    )


def test_heldout_sets_are_not_the_dev_set_nor_each_other():
    held = {c.text.lower() for c in load_cases(HELDOUT)}
    fresh = {c.text.lower() for c in load_cases(FRESH)}
    assert len(held) >= 40 and len(fresh) >= 30
    assert not held & fresh
    if DEV.is_file():
        dev = {c.text.lower() for c in load_cases(DEV)}
        assert not held & dev and not fresh & dev


def run_cases(llm, path: Path) -> list:
    """Outcomes of the home-robot agent on the real model for every case in ``path``."""
    robot = SimulatedRobot()
    robot.speed_m_s = 50.0
    agent = build_home_robot_agent(llm, robot, reply_max_tokens=24)
    try:
        return evaluate_agent(agent, load_cases(path))
    finally:
        agent.close()


@pytest.mark.models
def test_heldout_accuracy_with_the_embedded_model_is_at_least_80_percent(real_llm):
    outcomes = run_cases(real_llm, HELDOUT)
    failures = [(o.case.text, o.got) for o in outcomes if not o.ok]
    assert accuracy(outcomes) >= 0.8, failures


@pytest.mark.models
def test_second_heldout_set_stays_at_least_at_75_percent(real_llm):
    """Measured 0.844 (27/32) at this commit; the floor guards against regressions, the
    failures it lists (idioms such as "kill the lights") are known."""
    outcomes = run_cases(real_llm, FRESH)
    assert accuracy(outcomes) >= 0.75, [(o.case.text, o.got) for o in outcomes if not o.ok]
