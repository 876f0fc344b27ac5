"""The Supervisor with RoomKit's modes and defaults, through the public API (class and YAML),
with a scripted LLM playing the supervisor that really calls the tools it is given."""

from __future__ import annotations

import json
import threading

import pytest

from edgevox.agents.decoders import TwoStageDecoder
from edgevox.agents.llm_agent import LLMAgent
from edgevox.errors import ArgumentError, ConfigError
from edgevox.orchestration import Immediate, OrchestrationConfig, Supervisor, WaitForIdle, build_orchestration
from edgevox.orchestration.events import DeliveryAfter
from edgevox.orchestration.strategies.supervisor import DEFAULT_DELEGATION_MESSAGE, DEFAULT_REFINE_INSTRUCTION
from edgevox.orchestration.strategies.supervisor_tools import tool_deadline_s
from edgevox.runtime.context import AgentContext
from edgevox.testing import ScriptedLLM


def boss_llm(choose, args=None, reply=lambda last: "Done."):
    """The supervisor's LLM: at a decision ``choose(user_turn)`` names a tool (or "none"; after a
    tool ran it is always "none"), the arguments are ``args``, and the reply is ``reply(prompt)``."""

    def answer(messages, grammar):
        last = messages[-1]["content"]
        if grammar and '"none"' in grammar:
            return "none" if "tool ran" in last or "tool failed" in last else choose(last)
        if grammar:
            return json.dumps(args or {})
        return reply(last)

    return ScriptedLLM(answer)


def boss(llm):
    return LLMAgent("boss", "You lead a team.", llm=llm, decoder=TwoStageDecoder())


def menu(llm):
    """The tool names offered at the first decision."""
    grammar = next(c.grammar for c in llm.calls if c.grammar and '"none"' in c.grammar)
    return grammar.split("::=", 1)[1].strip().split("\n")[0]


# -- strategy=None (the default): the supervisor decides, one tool per worker -------------------


def test_default_supervisor_decides_with_a_delegate_to_tool_per_worker(Scripted):
    llm = boss_llm(
        lambda turn: "delegate_to_researcher" if "keys" in turn else "none",
        {"task": "find the keys"},
        lambda last: "They are in the hall." if '"result": "keys: in the hall"' in last else "Hello!",
    )
    researcher = Scripted("researcher", lambda t, c: "keys: in the hall")
    writer = Scripted("writer", "a poem")
    sup = Supervisor(boss(llm), [researcher, writer])
    assert (sup.strategy, sup.auto_delegate, sup.refine_task, sup.wait_for_result) == (None, False, True, True)
    result = sup.run("where are my keys?", AgentContext(session_id="u"))
    assert menu(llm) == '"delegate_to_researcher" | "delegate_to_writer" | "none"'
    # The agent's own 10 s tool deadline would cut a worker off: the delegation tools carry their own.
    assert result.steps[0].tool_calls[0].ok and tool_deadline_s(sup) == 3600.0
    assert tool_deadline_s(Supervisor(Scripted("b"), [researcher, writer], timeout_s=60.0)) == 130.0
    assert result.text == "They are in the hall." and result.agent == "boss"
    assert researcher.tasks == ["find the keys"] and writer.tasks == []
    # Small talk: the supervisor answers itself, nobody is asked.
    assert sup.run("hi there", AgentContext(session_id="u")).text == "Hello!"
    assert researcher.tasks == ["find the keys"]


def test_default_supervisor_from_yaml_gets_the_same_tools(Scripted):
    llm = boss_llm(lambda turn: "delegate_to_writer", {"task": "a haiku"}, lambda last: "Here it is.")
    writer = Scripted("writer", "old pond")
    coord = build_orchestration(
        {"strategy": "supervisor", "supervisor": {"supervisor": "boss", "workers": ["writer"]}},
        {"boss": boss(llm), "writer": writer},
    )
    assert coord.run("write a haiku", AgentContext(session_id="y")).text == "Here it is."
    assert menu(llm) == '"delegate_to_writer" | "none"' and writer.tasks == ["a haiku"]


def test_a_failing_worker_is_reported_to_the_model_and_listed_missing(Scripted):
    def broken(task, ctx):
        raise RuntimeError("sensor offline")

    def reply(last):
        return "The camera is down." if '"status": "failed"' in last and "sensor offline" in last else "?"

    llm = boss_llm(lambda turn: "delegate_to_camera", {"task": "look"}, reply)
    result = Supervisor(boss(llm), [Scripted("camera", broken)]).run("look around", AgentContext())
    assert result.data["missing"] == ["camera"] and result.text == "The camera is down."


# -- strategy set, auto_delegate=False: one delegate_workers tool ----------------------------------


@pytest.mark.parametrize("strategy", ["sequential", "parallel"])
def test_a_strategy_gives_one_delegate_workers_tool_running_the_whole_team(Scripted, strategy):
    llm = boss_llm(
        lambda turn: "delegate_workers" if "kitchen" in turn else "none",
        {"task": "the kitchen"},
        lambda last: "Clear and dry." if "no obstacles" in last and "floor dry" in last else "?",
    )
    camera, lidar = Scripted("camera", "no obstacles"), Scripted("lidar", "floor dry")
    sup = Supervisor(boss(llm), [camera, lidar], strategy=strategy)
    result = sup.run("check the kitchen", AgentContext())
    assert menu(llm) == '"delegate_workers" | "none"'
    assert result.text == "Clear and dry." and result.data["missing"] == []
    assert camera.tasks == ["the kitchen"]
    assert lidar.tasks == (["the kitchen\ncamera found: no obstacles"] if strategy == "sequential" else ["the kitchen"])


# -- auto_delegate=True: every turn runs the team, on the refined request --------------------------


def test_auto_delegate_refines_the_request_to_its_topic_first(Scripted):
    def boss_says(task, ctx):
        return "the kitchen" if task.startswith(DEFAULT_REFINE_INSTRUCTION) else "Summary: " + task.splitlines()[-2]

    chief = Scripted("boss", boss_says)
    camera = Scripted("camera", lambda t, c: f"{t} looks clear")
    result = Supervisor(chief, [camera], strategy="parallel", auto_delegate=True).run(
        "could you have a look at the kitchen please", AgentContext()
    )
    assert chief.tasks[0].endswith("User request: could you have a look at the kitchen please")
    assert camera.tasks == ["the kitchen"]
    assert result.text == "Summary: - camera: the kitchen looks clear"


def test_auto_delegate_from_yaml_with_a_refine_instruction_and_without_refining(Scripted):
    chief = Scripted("boss", lambda t, c: "TOPIC" if t.startswith("Name the room") else "ok")
    camera = Scripted("camera", "clear")
    section = {"supervisor": "boss", "workers": ["camera"], "strategy": "sequential", "auto_delegate": True}
    agents = {"boss": chief, "camera": camera}
    build_orchestration(
        {"strategy": "supervisor", "supervisor": {**section, "refine_instruction": "Name the room."}}, agents
    ).run("the hall?", AgentContext())
    build_orchestration({"strategy": "supervisor", "supervisor": {**section, "refine_task": False}}, agents).run(
        "the hall?", AgentContext()
    )
    assert chief.tasks[0] == "Name the room.\nUser request: the hall?"
    assert camera.tasks == ["TOPIC", "the hall?"]


# -- refused at construction, in one line ---------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"auto_delegate": True}, "auto_delegate=True) needs strategy="),
        ({"async_delivery": True, "delivery": "immediate"}, "with strategy=None use wait_for_result=False"),
        ({"strategy": "round_robin"}, "'round_robin': use None"),
        ({"strategy": "parallel", "async_delivery": True}, "needs delivery="),
        ({"wait_for_result": False}, "needs delivery="),
        ({"strategy": "parallel", "async_delivery": True, "delivery": "later"}, "delivery 'later': use"),
    ],
)
def test_contradictory_options_are_refused_in_one_line(Scripted, kwargs, words):
    with pytest.raises(ArgumentError) as err:
        Supervisor(Scripted("boss"), [Scripted("w")], **kwargs)
    assert words in str(err.value) and "\n" not in str(err.value)


def test_yaml_refuses_auto_delegate_without_a_strategy():
    with pytest.raises(ConfigError, match="`auto_delegate: true` needs `strategy: sequential`"):
        build_orchestration(
            {"strategy": "supervisor", "supervisor": {"supervisor": "a", "workers": ["b"], "auto_delegate": True}},
            {"a": object(), "b": object()},
        )


def test_the_yaml_defaults_are_the_class_defaults(Scripted):
    section = OrchestrationConfig.model_validate(
        {"strategy": "supervisor", "supervisor": {"supervisor": "a", "workers": ["b"]}}
    ).supervisor
    sup = Supervisor(Scripted("a"), [Scripted("b")])
    for option in ("strategy", "auto_delegate", "refine_task", "async_delivery", "delegation_message"):
        assert getattr(section, option) == getattr(sup, option), option
    assert section.wait_for_result == sup.wait_for_result and sup.delegation_message == DEFAULT_DELEGATION_MESSAGE


# -- async_delivery: the model decides; one delegation, answered later ------------------------------


def voice_supervisor(Scripted, delivery, *, gate, **kw):
    def choose(turn):
        return "delegate_workers" if turn.startswith("research") else "none"

    def reply(last):
        if "Your workers reported" in last:
            return "The kitchen is clear."
        return "You're welcome!" if "thanks" in last else "Sure."

    llm = boss_llm(choose, {"task": "the kitchen"}, reply)
    worker = Scripted("researcher", lambda t, c: (gate.wait(5), "no obstacles")[1])
    sup = Supervisor(
        boss(llm), [worker], strategy="parallel", auto_delegate=True, async_delivery=True, delivery=delivery, **kw
    )
    return sup, worker


def test_async_delivery_thanks_starts_no_second_analysis(Scripted, bus, recorded):
    delivered, done, gate = [], threading.Event(), threading.Event()
    delivery = Immediate(lambda items: (delivered.extend(i.text for i in items), done.set()), publish=bus.publish)
    sup, worker = voice_supervisor(Scripted, delivery, gate=gate)
    ctx = AgentContext(bus=bus, session_id="kitchen")

    first = sup.run("research the kitchen", ctx)
    assert first.text == f"{DEFAULT_DELEGATION_MESSAGE} Sure." and first.data["delegated"] == ["delegate_workers"]
    second = sup.run("thanks!", ctx)
    assert second.text == "You're welcome!" and second.data["delegated"] == []
    # Asked again while the team is at work: the tool answers already_running, nothing starts.
    third = sup.run("research the kitchen again", ctx)
    assert third.data["delegated"] == [] and not third.text.startswith(DEFAULT_DELEGATION_MESSAGE)
    gate.set()
    assert done.wait(5) and first.data["handles"][0].wait(5)
    assert delivered == ["The kitchen is clear."] and worker.tasks == ["the kitchen"]
    assert sup.close() == []
    assert {e.session_id for e in recorded if isinstance(e, DeliveryAfter)} == {"kitchen"}


def test_delegation_message_none_says_nothing_extra(Scripted):
    gate = threading.Event()
    gate.set()
    delivery = Immediate(lambda items: None)
    sup, _ = voice_supervisor(Scripted, delivery, gate=gate, delegation_message=None)
    result = sup.run("research the kitchen", AgentContext())
    assert result.text == "Sure." and result.data["handles"][0].wait(5)
    assert sup.close() == []


def test_wait_for_result_false_runs_the_worker_in_the_background(Scripted):
    delivered, done, gate = [], threading.Event(), threading.Event()
    llm = boss_llm(lambda turn: "delegate_to_researcher", {"task": "the kitchen"}, lambda last: "On it.")
    worker = Scripted("researcher", lambda t, c: (gate.wait(5), "no obstacles")[1])
    sup = Supervisor(
        boss(llm),
        [worker],
        wait_for_result=False,
        delivery=Immediate(lambda items: (delivered.extend(i.text for i in items), done.set())),
    )
    first = sup.run("look at the kitchen", AgentContext(session_id="s"))
    assert first.text == f"{DEFAULT_DELEGATION_MESSAGE} On it." and delivered == []
    again = sup.run("look at the kitchen", AgentContext(session_id="s"))  # still running: not twice
    assert again.data["delegated"] == []
    gate.set()
    assert done.wait(5) and delivered == ["researcher: no obstacles"] and worker.tasks == ["the kitchen"]
    assert sup.close() == []


# -- delivery as a string; no answer lost -----------------------------------------------------------


@pytest.mark.parametrize("name", ["immediate", "wait_for_idle", "queued"])
def test_a_delivery_string_works_and_an_answer_without_a_sink_is_said_next_turn(Scripted, name):
    gate = threading.Event()
    gate.set()
    sup, _ = voice_supervisor(Scripted, name, gate=gate)
    assert sup.delivery is not None and sup.delivery.name == name
    first = sup.run("research the kitchen", AgentContext(session_id="k"))
    assert first.data["handles"][0].wait(5) and first.data["handles"][0].status == "completed"
    later = sup.run("thanks!", AgentContext(session_id="k"))
    assert later.text == "The kitchen is clear. You're welcome!"
    assert sup.close() == []


def test_a_failing_sink_loses_no_answer(Scripted, bus, recorded, of_kind):
    def unplugged(items):
        raise OSError("speaker unplugged")

    gate = threading.Event()
    gate.set()
    sup, _ = voice_supervisor(Scripted, Immediate(unplugged, publish=bus.publish), gate=gate)
    first = sup.run("research the kitchen", AgentContext(session_id="k"))
    assert first.data["handles"][0].wait(5)
    after = of_kind(recorded, DeliveryAfter)[0]
    assert not after.ok and "speaker unplugged" in after.error and after.texts == ["The kitchen is clear."]
    assert sup.run("thanks!", AgentContext(session_id="k")).text == "The kitchen is clear. You're welcome!"
    assert sup.close() == []


def test_async_delivery_from_yaml_delivers_through_the_configured_strategy(Scripted):
    delivered, done, gate = [], threading.Event(), threading.Event()
    gate.set()
    llm = boss_llm(
        lambda turn: "delegate_workers" if turn.startswith("research") else "none",
        {"task": "the kitchen"},
        lambda last: "The kitchen is clear." if "Your workers reported" in last else "Sure.",
    )
    coord = build_orchestration(
        {
            "strategy": "supervisor",
            "supervisor": {
                "supervisor": "boss",
                "workers": ["researcher"],
                "strategy": "parallel",
                "auto_delegate": True,
                "async_delivery": True,
                "delegation_message": "Give me a moment.",
            },
            "delivery": {"strategy": "wait_for_idle", "buffer": 0.0},
        },
        {"boss": boss(llm), "researcher": Scripted("researcher", "no obstacles")},
        sink=lambda items: (delivered.extend(i.text for i in items), done.set()),
    )
    assert isinstance(coord.delivery, WaitForIdle) and coord.delivery.buffer_s == 0.0
    result = coord.run("research the kitchen", AgentContext(session_id="y"))
    assert result.text == "Give me a moment. Sure."
    assert done.wait(5) and delivered == ["The kitchen is clear."]
    assert coord.strategy_for("y").close() == []
