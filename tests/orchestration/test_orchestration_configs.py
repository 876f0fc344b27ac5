"""Every example config in configs/orchestration, one per pattern, loaded from YAML and built
into real agents (``make_agents``) and a Coordinator (``build_orchestration``) over a scripted
LLM that plays each agent: its replies, and the tools it decides to call (through the
agents' real decoders, so a handoff or delegation is a real tool call). Each test asserts the
pattern's behaviour across turns."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from edgevox.agents.events import ToolCallFinished
from edgevox.config import load_config, parse_config
from edgevox.config.build import make_agents, make_llms
from edgevox.config.schema import AppConfig, LLMConfig
from edgevox.errors import ConfigError, HandoffError
from edgevox.orchestration import (
    Coordinator,
    Loop,
    OrchestrationConfig,
    Pipeline,
    Supervisor,
    Swarm,
    build_orchestration,
)
from edgevox.orchestration.events import (
    Escalated,
    HandoffAccepted,
    HandoffRejected,
    Routed,
    SupervisorObserved,
    TurnAnswered,
)
from edgevox.runtime.blackboard import Blackboard
from edgevox.runtime.bus import EventBus
from edgevox.runtime.context import AgentContext
from edgevox.testing import ScriptedLLM

CONFIGS = Path(__file__).resolve().parents[2] / "configs" / "orchestration"

Choose = Callable[[str], "tuple[str, dict] | None"]


@dataclass
class Model:
    """The scripted model of one config: ``replies[agent](last message) -> str`` and
    ``tools[agent](last message) -> (tool, args) | None`` at a tool decision (after a tool ran
    it answers). ``prompts`` records each reply's whole conversation. Agents are told apart by
    their system prompt, which starts with their instructions."""

    app: AppConfig
    replies: dict[str, Callable[[str], str]] = field(default_factory=dict)
    tools: dict[str, Choose] = field(default_factory=dict)
    prompts: dict[str, list[str]] = field(default_factory=dict)
    """Every reply prompt each agent was given, in order."""
    offered: dict[str, list[str]] = field(default_factory=dict)
    """The tool menus (grammar) each agent was offered."""
    _picked: dict[str, tuple[str, dict]] = field(default_factory=dict)

    def who(self, system: str) -> str:
        return next(n for n, a in self.app.agents.items() if system.startswith(a.instructions[:40]))

    def answer(self, messages: list[dict], grammar: str | None) -> str:
        agent = self.who(messages[0]["content"])
        last = messages[-1]["content"]
        if grammar and '"none"' in grammar:  # which tool (or none)
            self.offered.setdefault(agent, []).append(grammar)
            choose = self.tools.get(agent)
            pick = None if choose is None or "tool ran" in last or "tool failed" in last else choose(last)
            if pick is None:
                return "none"
            self._picked[agent] = pick
            return pick[0]
        if grammar:  # the arguments of the tool picked
            return json.dumps(self._picked[agent][1])
        prompt = "\n".join(str(m["content"]) for m in messages[1:])
        self.prompts.setdefault(agent, []).append(prompt)
        reply = self.replies.get(agent)
        return reply(last) if reply else f"{agent} here."


@dataclass
class Built:
    app: AppConfig
    model: Model
    coordinator: Coordinator
    engines: list[ScriptedLLM]
    agents: dict
    bus: EventBus

    def turn(self, text: str, session: str = "u", **ctx: object) -> object:
        """One user turn, in a context like the App's (the runtime's bus)."""
        return self.coordinator.run(text, AgentContext(session_id=session, bus=self.bus, **ctx))  # type: ignore[arg-type]

    def spoken(self, text: str, session: str = "u") -> tuple[str, object]:
        """One user turn streamed as the voice loop does: (every word said, the result)."""
        stream = self.coordinator.stream(text, AgentContext(session_id=session, bus=self.bus))
        return "".join(stream.text_deltas()), stream.result()


@pytest.fixture
def build(bus) -> Iterator[Callable[..., Built]]:
    blackboards: list[Blackboard] = []

    def make(name: str, *, replies=None, tools=None, sink=None, **overrides) -> Built:
        app = load_config(CONFIGS / name, overrides=overrides)
        model = Model(app, dict(replies or {}), dict(tools or {}))
        engines: list[ScriptedLLM] = []

        def engine(cfg: LLMConfig) -> ScriptedLLM:
            engines.append(ScriptedLLM(model.answer))
            return engines[-1]

        llms = make_llms(app, make=engine)
        agents = make_agents(app, llms[app.main_agent], llms=llms)
        blackboards.append(Blackboard())
        coordinator = build_orchestration(
            app.orchestration, agents, main_agent=app.main_agent, bus=bus, blackboard=blackboards[-1], sink=sink
        )
        return Built(app, model, coordinator, engines, agents, bus)

    yield make
    for bb in blackboards:
        bb.close()


def test_every_example_config_is_covered():
    assert sorted(p.name for p in CONFIGS.glob("*.yaml")) == [
        "delegation.yaml",
        "home_swarm.yaml",
        "per_agent_models.yaml",
        "phased_conversation.yaml",
        "research_supervisor.yaml",
        "routing_rules.yaml",
        "supervisor_decides.yaml",
        "support_pipeline.yaml",
        "voice_supervisor.yaml",
        "writer_review_loop.yaml",
    ]


def handoff(target: str, summary: str, **more: object) -> tuple[str, dict]:
    return "handoff_conversation", {"target": target, "reason": "its part", "summary": summary, **more}


# -- pipeline: a handoff chain, one agent per turn ------------------------------------------------


def test_support_pipeline_is_a_handoff_chain_one_agent_per_turn(build, recorded, of_kind):
    b = build(
        "support_pipeline.yaml",
        tools={
            "triage": lambda last: handoff("handler", "grinding wheel") if "wheel" in last else None,
            "handler": lambda last: handoff("resolver", "wheel fixed") if "works now" in last else None,
        },
        replies={
            "triage": lambda p: "A hardware problem." if "wheel" in p else "What is wrong?",
            "handler": lambda p: "Oil the left wheel." if "grinding wheel" in p else "?",
            "resolver": lambda p: "Glad it works, goodbye!",
        },
    )
    assert isinstance(b.coordinator.strategy_for("u"), Pipeline)
    assert b.turn("Hello").text == "What is wrong?"  # triage holds the session, no handoff yet
    first = b.turn("My wheel makes a grinding noise.")
    assert first.agent == "triage" and first.text.startswith("A hardware problem.")
    assert "Connecting you with handler" in first.text
    # triage's handoff tool lists exactly its next stage.
    args = [g for g in b.engines[0].calls if g.grammar and "target" in g.grammar]
    assert '\\"handler\\"' in args[0].grammar and "resolver" not in args[0].grammar
    second = b.turn("What should I do?")
    assert (second.agent, second.text) == ("handler", "Oil the left wheel.")
    # The handler read triage's summary and the user's own words from the earlier turn.
    assert "grinding wheel" in b.model.prompts["handler"][0]
    assert "My wheel makes a grinding noise." in b.model.prompts["handler"][0]
    third = b.turn("Done, it works now.")
    assert third.agent == "handler" and "Connecting you with resolver" in third.text
    fourth = b.turn("Thanks!")
    assert (fourth.agent, fourth.text) == ("resolver", "Glad it works, goodbye!")
    # One agent answered each turn: triage twice, handler twice, resolver once.
    assert {a: len(p) for a, p in b.model.prompts.items() if a != "quality"} == {
        "triage": 2,
        "handler": 2,
        "resolver": 1,
    }
    assert [e.target_agent for e in of_kind(recorded, HandoffAccepted)] == ["handler", "resolver"]
    assert [e.agent for e in of_kind(recorded, TurnAnswered)] == ["triage", "triage", "handler", "handler", "resolver"]
    # The pipeline's supervisor_id observed all five exchanges and never answered.
    observed = of_kind(recorded, SupervisorObserved)
    assert len(observed) == 5 and {e.supervisor for e in observed} == {"quality"}
    assert len(b.model.prompts["quality"]) == 5


# -- swarm: peers hand the same turn on ---------------------------------------------------------


def test_home_swarm_hands_the_turn_to_a_peer_that_answers_at_once_and_keeps_the_session(build, recorded, of_kind):
    b = build(
        "home_swarm.yaml",
        tools={
            "concierge": lambda last: (
                handoff("chef", "wants pasta") if "cook" in last and "weather" not in last else None
            ),
            "chef": lambda last: handoff("concierge", "not food") if "weather" in last else None,
        },
        replies={
            "concierge": lambda p: "It is sunny." if "weather" in p else "Our chef will help.",
            "chef": lambda p: "Boil the pasta for ten minutes." if "pasta" in p else "A pinch of salt.",
        },
    )
    assert isinstance(b.coordinator.strategy_for("anyone"), Swarm)
    assert isinstance(b.coordinator.strategy_for("kiosk"), Pipeline)
    said, result = b.spoken("How do I cook pasta?")
    swarm = result.steps[0]
    assert swarm.agent == "chef" and result.text == "Boil the pasta for ten minutes."
    # The concierge's own words are held back; the handoff section's notification is said once.
    assert said.count("Connecting you with our chef...") == 1 and "Our chef will help." not in said
    assert said.endswith("Boil the pasta for ten minutes.")
    # The next turn stays with the chef; the chef hands back for anything else.
    assert b.turn("How much salt?").steps[0].agent == "chef"
    back = b.turn("What is the weather like?")
    assert back.steps[0].agent == "concierge" and back.text.endswith("It is sunny.")
    # Another session starts at the entry agent.
    assert b.turn("hello", session="v").steps[0].agent == "concierge"
    assert [e.target_agent for e in of_kind(recorded, HandoffAccepted)] == ["chef", "concierge"]


# -- conversation: phases with allowed transitions ----------------------------------------------


def test_phased_conversation_moves_through_allowed_phases_and_refuses_others(build, recorded, of_kind):
    b = build(
        "phased_conversation.yaml",
        tools={
            # The receptionist tries to skip straight to closing first: refused, not a phase jump.
            "receptionist": lambda last: (
                handoff("human", "wants a person")
                if "a person" in last
                else handoff("closer", "skip", next_phase="closing")
                if "skip" in last
                else handoff("technician", "printer jams", next_phase="handling")
                if "printer" in last
                else None
            ),
            "technician": lambda last: (
                handoff("closer", "printer fixed", next_phase="closing") if "fixed" in last else None
            ),
        },
        replies={
            "receptionist": lambda p: "Noted.",
            "technician": lambda p: "Open the tray and remove the paper." if "printer jams" in p else "?",
            "closer": lambda p: "Great, ticket closed.",
            "auditor": lambda p: "all fine",
        },
    )
    assert b.coordinator.strategy_for("u") is None  # routed turn by turn
    # The receptionist may only move the conversation to handling: its tool's enums say so, and
    # a jump to closing is refused before anything changes.
    skipped = b.turn("Please skip ahead")
    assert skipped.agent == "receptionist"
    failed = [e for e in of_kind(recorded, ToolCallFinished) if e.tool == "handoff_conversation"]
    assert not failed[0].ok and "expected one of 'technician'" in failed[0].error
    with pytest.raises(HandoffError, match="may move to 'handling'"):
        b.coordinator.handoff.request(
            session_id="u", from_agent="receptionist", target="technician", next_phase="closing"
        )
    assert of_kind(recorded, HandoffRejected)
    moved = b.turn("My printer jams")
    assert moved.agent == "receptionist" and "Connecting you with the technician..." in moved.text
    fix = b.turn("What now?")
    assert (fix.agent, fix.text) == ("technician", "Open the tray and remove the paper.")
    assert "My printer jams" in b.model.prompts["technician"][0]  # the user never repeats themselves
    b.turn("It is fixed")
    assert b.turn("bye").agent == "closer"
    # The auditor observed every exchange and never answered.
    observed = of_kind(recorded, SupervisorObserved)
    assert len(observed) == 5 and all(e.supervisor == "auditor" for e in observed)
    assert all(e.agent != "auditor" for e in of_kind(recorded, TurnAnswered))
    assert [e.phase for e in of_kind(recorded, Routed)][-1] == "closing"
    # Escalation: a person is asked for on another session; the user hears who picks up where.
    person = b.turn("I want to talk to a person", session="p", channel="voice")
    assert person.agent == "receptionist" and "voice channel" in person.text
    escalated = of_kind(recorded, Escalated)
    assert [(e.from_agent, e.channel) for e in escalated] == [("receptionist", "voice")]


# -- supervisor: the supervisor decides with delegate_to_<worker> tools ---------------------------


def test_supervisor_decides_which_worker_to_ask_and_answers_small_talk_itself(build):
    b = build(
        "supervisor_decides.yaml",
        tools={
            "butler": lambda last: (
                ("delegate_to_finder", {"task": "where are the keys"})
                if "keys" in last
                else ("delegate_to_forecaster", {"task": "weather today"})
                if "weather" in last
                else None
            )
        },
        replies={
            "butler": lambda p: "They are on the hall table." if "hall table" in p else "Hello! How can I help?",
            "finder": lambda p: "On the hall table.",
            "forecaster": lambda p: "Sunny.",
        },
    )
    sup = b.coordinator.strategy_for("u")
    assert isinstance(sup, Supervisor) and sup.strategy is None and not sup.auto_delegate
    assert b.turn("Hi there!").text == "Hello! How can I help?"
    assert "finder" not in b.model.prompts and "forecaster" not in b.model.prompts  # nobody was asked
    assert '"delegate_to_finder" | "delegate_to_forecaster" | "none"' in b.model.offered["butler"][0]
    answer = b.turn("Where are my keys?")
    assert (answer.agent, answer.text) == ("butler", "They are on the hall table.")
    assert len(b.model.prompts["finder"]) == 1 and "forecaster" not in b.model.prompts
    assert b.model.prompts["finder"][0].endswith("where are the keys")


# -- supervisor: the team runs automatically, in parallel ----------------------------------------


def test_research_supervisor_refines_the_task_and_runs_both_workers_every_turn(build):
    b = build(
        "research_supervisor.yaml",
        replies={
            "planner": lambda p: (
                "Go down the hall to the kitchen and mind the wet floor."
                if "Kitchen, down the hall." in p and "Mind the wet floor." in p
                else "water"
                if "what the user wants" in p
                else "?"
            ),
            "navigator": lambda p: "Kitchen, down the hall.",
            "safety": lambda p: "Mind the wet floor.",
        },
    )
    sup = b.coordinator.strategy_for("x")
    assert isinstance(sup, Supervisor) and (sup.strategy, sup.auto_delegate, sup.refine_task) == (
        "parallel",
        True,
        True,
    )
    for turn in ("where can I get water?", "and a glass?"):
        assert b.turn(turn).text == "Go down the hall to the kitchen and mind the wet floor."
    # The workers got the refined task, not the user's words, on both turns.
    assert [p.splitlines()[-1] for p in b.model.prompts["navigator"]] == ["water", "water"]
    assert len(b.model.prompts["safety"]) == 2
    assert sup.close() == []


# -- supervisor: background delegation on the voice channel, delivered later -----------------------


def test_voice_supervisor_delegates_in_the_background_once_and_delivers_the_answer_later(build):
    delivered: list[str] = []
    done = threading.Event()
    b = build(
        "voice_supervisor.yaml",
        sink=lambda items: (delivered.extend(i.text for i in items), done.set()),
        tools={"host": lambda last: ("delegate_workers", {"task": "the kitchen"}) if "check" in last else None},
        replies={
            "host": lambda last: (
                "The kitchen is clear and two doors down."
                if "Your workers reported" in last
                else "On it."
                if "check" in last
                else "You're welcome!"
            ),
            "inspector": lambda last: "No obstacles.",
            "mapper": lambda last: "Two doors down.",
        },
        **{"orchestration.delivery.buffer": 0.0},  # no silence to wait for: nobody is talking here
    )
    sup = b.coordinator.strategy_for("u")
    assert isinstance(sup, Supervisor) and sup.async_delivery
    first = b.turn("Please check the kitchen")
    assert first.text == "I'm sending my team to check. On it."
    # Small talk while the team works: answered by the host, no second analysis.
    assert b.turn("thanks!").text == "You're welcome!"
    assert done.wait(10) and delivered == ["The kitchen is clear and two doors down."]
    assert [len(b.model.prompts[w]) for w in ("inspector", "mapper")] == [1, 1]
    assert sup.close() == []


# -- loop: a writer revised until its reviewers approve -----------------------------------------


def test_writer_review_loop_revises_until_every_reviewer_approves(build):
    b = build(
        "writer_review_loop.yaml",
        replies={
            "writer": lambda p: "Dinner is at seven, please be on time." if "Too shouty" in p else "DINNER AT 7!!!",
            "clarity": lambda p: "APPROVED",
            # "NOT APPROVED" is a rejection, never approval.
            "tone": lambda p: "NOT APPROVED: Too shouty." if "!!!" in p.rsplit("Answer:", 1)[-1] else "**Approved.**",
        },
    )
    loop = b.coordinator.strategy_for("x")
    assert isinstance(loop, Loop) and (loop.strategy, loop.approval) == ("sequential", "all")
    result = b.turn("announce dinner at seven")
    raw = result.steps[0]
    assert result.text == "Dinner is at seven, please be on time."
    assert (raw.data["approved"], raw.data["iteration"]) == (True, 2)
    # Sequential reviewers: tone saw clarity's review of the same draft.
    assert "APPROVED" in b.model.prompts["tone"][0]


# -- delegation: delegates lists and limits ---------------------------------------------------------


def test_delegation_config_gives_each_agent_exactly_its_delegates(build):
    b = build(
        "delegation.yaml",
        tools={
            "assistant": lambda last: (
                ("delegate", {"agent": "finder", "task": "where is the vacuum"})
                if "vacuum" in last
                else ("delegate", {"agent": "planner", "task": "clean the kitchen"})
                if "clean" in last
                else None
            ),
            "planner": lambda last: ("delegate", {"agent": "finder", "task": "where is the mop"}),
        },
        replies={
            "assistant": lambda p: "It is in the closet." if "closet" in p else "Hi!",
            "finder": lambda p: "In the closet." if "vacuum" in p else "Behind the door.",
            "planner": lambda p: "Take the mop from behind the door, then mop." if "Behind the door" in p else "?",
        },
    )
    assert b.turn("Where is the vacuum?").text == "It is in the closet."
    # The assistant's delegate tool lists exactly its delegates; the planner's only the finder.
    offered_args = [c.grammar for e in b.engines for c in e.calls if c.grammar and "agent" in c.grammar]
    assert any('\\"finder\\"' in g and '\\"planner\\"' in g for g in offered_args)
    b.turn("Please clean the kitchen")
    assert b.model.prompts["planner"] and "Behind the door" in b.model.prompts["planner"][0]
    assert b.model.prompts["finder"][-1].endswith("where is the mop")  # a chain: assistant -> planner -> finder
    # supyagent's limits reached the agent; a delegate not defined is a config error with a hint.
    assert b.agents["assistant"].limits.max_tool_calls_per_turn == 3
    text = (CONFIGS / "delegation.yaml").read_text().replace("delegates: [finder]", "delegates: [findr]")
    with pytest.raises(ConfigError, match="did you mean 'finder'"):
        parse_config(text, env={})


# -- routing rules: ascending priority and channel types -------------------------------------------


def test_routing_rules_route_by_channel_in_ascending_priority(build, recorded, of_kind):
    b = build(
        "routing_rules.yaml",
        replies={
            "operator": lambda p: "Battery 80 percent.",
            "typist": lambda p: "Your battery is at 80 percent and charging.",
            "concierge": lambda p: "Hello there!",
        },
    )
    assert b.turn("status?", channel="ros2").agent == "operator"
    assert b.turn("status?", session="t", channel="text").agent == "typist"
    assert b.turn("hi robot", session="v", channel="voice").agent == "concierge"
    assert [e.why for e in of_kind(recorded, Routed)] == ["rule:ops-console", "rule:keyboard", "default"]


# -- a different model per agent -------------------------------------------------------------------


def test_per_agent_models_share_an_engine_where_the_model_and_options_are_the_same(build):
    b = build(
        "per_agent_models.yaml",
        replies={
            "planner": lambda p: "Kitchen; mind the floor." if "Kitchen." in p and "Wet floor." in p else "?",
            "navigator": lambda p: "Kitchen.",
            "safety": lambda p: "Wet floor.",
        },
    )
    assert len(b.engines) == 2  # the planner on llm:, both workers on one 1024-token engine
    planner_llm, worker_llm = b.engines
    assert b.agents["navigator"].llm is b.agents["safety"].llm is worker_llm
    assert b.agents["planner"].llm is planner_llm
    for _ in range(2):
        assert b.turn("where can I get water?").text == "Kitchen; mind the floor."
    # Each engine served only its agents, with each agent's per-call keys.
    assert {(c.max_tokens, c.temperature) for c in worker_llm.calls} == {(32, 0.0), (32, 0.3)}
    assert {c.max_tokens for c in planner_llm.calls} == {64}


# -- errors ----------------------------------------------------------------------------------------


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
