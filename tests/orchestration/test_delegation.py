from __future__ import annotations

import json
import threading

import pytest

from edgevox.agents.decoders import FreeTextDecoder
from edgevox.agents.tools import tool
from edgevox.config import parse_config
from edgevox.config.build import make_agents
from edgevox.errors import ConfigError, DelegationError
from edgevox.orchestration import AgentRegistry, Delegator
from edgevox.orchestration.events import DelegationFinished, DelegationStarted
from edgevox.orchestration.tools import delegate
from edgevox.runtime.context import AgentContext
from edgevox.testing import ScriptedLLM


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_delegation_past_max_depth_gives_the_agent_an_error_result(Scripted):
    # Every agent delegates to the next one, forever, through the real tool.
    agents = {}
    for i in range(8):
        nxt = f"a{i + 1}"
        agents[f"a{i}"] = Scripted(
            f"a{i}", lambda t, c, nxt=nxt, i=i: agents[f"a{i}"].call_tool(delegate, {"agent": nxt, "task": t}, c)
        )
    agents["a8"] = Scripted("a8", "bottom")
    d = Delegator(agents)
    out = d.delegate("a0", "go", AgentContext(agent_name="root"))
    # a4 runs at depth 5; its delegation is refused and it reads the error as its tool result.
    assert [c.depth for c in agents["a4"].contexts] == [5]
    deepest = agents["a4"].tool_results[-1]
    assert json.loads(deepest)["ok"] is False
    assert json.loads(deepest)["error"] == "Maximum delegation depth (5) reached. Cannot delegate further."
    assert agents["a5"].tasks == []
    assert out.ok is True  # each level answered with what it had
    stats = d.registry.stats()
    assert stats["completed"] == 5 and stats["active"] == 0


def test_registry_tracks_parent_depth_status_children_and_cleans_up():
    clock = Clock()
    reg = AgentRegistry(clock=clock)
    root = reg.register("boss", depth=1, session_id="s")
    kid = reg.register("worker", parent=root, depth=2, session_id="s")
    stuck = reg.register("slow", parent=root, depth=2, session_id="s")
    assert [c.id for c in reg.children(root)] == [kid, stuck]
    reg.finish(kid, "completed", output="done")
    reg.finish(root, "failed", error="x")
    assert reg.get(kid).status == "completed" and reg.get(kid).output == "done" and reg.get(kid).depth == 2
    assert reg.stats()["active"] == 1 and reg.stats()["max_active_depth"] == 2
    clock.now += 10
    assert reg.cleanup(finished_older_than_s=60) == 0
    assert reg.cleanup(finished_older_than_s=5) == 2
    assert reg.get(kid) is None and reg.get(stuck) is not None
    assert reg.cleanup(stale_after_s=5) == 1
    assert reg.stats()["entries"] == 0 and reg.stats()["total_finished"]["failed"] == 2


def test_parallel_delegation_respects_the_concurrency_cap(Scripted):
    lock = threading.Lock()
    running = [0]
    peak = [0]
    entered = threading.Semaphore(0)

    def work(task, ctx):
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        entered.release()
        with lock:
            running[0] -= 1
        return task

    agents = {f"w{i}": Scripted(f"w{i}", work) for i in range(6)}
    d = Delegator(agents, max_concurrency=2)
    with pytest.raises(DelegationError, match="unknown agent 'ghost'; you can delegate to: w0, w1"):
        d.delegate_parallel([(n, f"job {n}") for n in agents] + [("ghost", "x")], AgentContext())
    assert entered.acquire(timeout=0) is False  # nothing started before the bad target was named
    results = d.delegate_parallel([(n, f"job {n}") for n in agents], AgentContext())
    assert [r.text for r in results] == [f"job w{i}" for i in range(6)]
    assert peak[0] <= 2 and d.peak_concurrency <= 2


def test_background_delegation_returns_a_handle_to_query_later(Scripted, bus, recorded, of_kind):
    gate = threading.Event()
    d = Delegator({"scout": Scripted("scout", lambda t, c: (gate.wait(5), "kitchen is clear")[1])})
    finished = threading.Event()
    handle = d.delegate_background(
        "scout", "check the kitchen", AgentContext(bus=bus, session_id="s"), on_done=lambda h: finished.set()
    )
    assert not handle.done and handle.status in ("pending", "active")
    gate.set()
    assert finished.wait(5)
    assert (handle.status, handle.output) == ("completed", "kitchen is clear")
    assert (handle.result().ok, handle.result().agent, handle.result().text) == (True, "scout", "kitchen is clear")
    assert d.registry.get(handle.id).status == "completed"
    assert of_kind(recorded, DelegationStarted)[0].background is True
    assert of_kind(recorded, DelegationFinished)[0].session_id == "s"
    assert d.close() == []


def test_background_delegation_can_be_cancelled(Scripted):
    d = Delegator({"patrol": Scripted("patrol", lambda t, c: (c.cancel_token.wait(5), "stopped early")[1])})
    handle = d.delegate_background("patrol", "patrol", AgentContext())
    handle.cancel("user said stop")
    assert handle.wait(5) and handle.status == "cancelled"
    assert d.close() == []


def test_unknown_delegate_target_is_an_error_result(Scripted):
    with pytest.raises(DelegationError, match="^unknown agent 'b'; you can delegate to: a$"):
        Delegator({"a": Scripted("a")}).delegate("b", "x", AgentContext())


def test_a_delegated_worker_runs_in_an_isolated_child_context(Scripted, bus):
    def worker(task, ctx):
        ctx.state["worker_notes"] = "private"
        return "done"

    boss_ctx = AgentContext(bus=bus, session_id="s", agent_name="boss", state={"plan": 1})
    result = Delegator({"w": Scripted("w", worker)}).delegate("w", "job", boss_ctx)
    assert result.ok and result.text == "done"
    assert boss_ctx.state == {"plan": 1}  # the worker's scratch state stayed its own


def calls(*specs: tuple[str, dict]) -> str:
    """One model message with these tool calls."""
    return json.dumps([{"name": n, "arguments": a} for n, a in specs])


# -- YAML: agents.<name>.delegates and limits ----------------------------------------------------------------------------------------------

TEAM = """\
llm: {engine: edgevox.testing:ScriptedLLM}
audio:
  input: {source: text}
  output: {sink: none}
orchestration:
  delegation: {max_depth: 1, max_concurrency: 1}
agents:
  planner:
    instructions: ""
    delegates: [coder]
    limits: {max_tool_calls_per_turn: 2, max_total_tool_calls: 10}
  coder:
    instructions: ""
    delegates: [planner]
  writer: {}
"""


def test_yaml_delegates_give_exactly_those_targets_and_limits_hold():
    app = parse_config(TEAM, env={})
    llm = ScriptedLLM(default="Okay.")
    agents = make_agents(app, llm)
    planner, coder, writer = agents["planner"], agents["coder"], agents["writer"]
    assert planner.tool("delegate").parameters["properties"]["agent"]["enum"] == ["coder"]
    assert coder.tool("delegate").parameters["properties"]["agent"]["enum"] == ["planner"]
    assert writer.tool("delegate") is None and writer.tool("list_processes") is None
    assert {"list_processes", "get_process_output", "kill_process"} <= {t.name for t in planner.tools}
    assert (planner.limits.max_tool_calls_per_turn, planner.limits.max_total_tool_calls) == (2, 10)

    # Driven by a scripted model: planner delegates to coder; coder (depth 1 = max_depth) may not go deeper.
    planner.decoder = coder.decoder = FreeTextDecoder()
    llm.push(
        calls(
            ("delegate", {"agent": "coder", "task": "write it"}),
            ("delegate", {"agent": "coder", "task": "again"}),
            ("delegate", {"agent": "coder", "task": "third"}),
        ),  # fmt: skip
        calls(("delegate", {"agent": "planner", "task": "help"})),  # coder's model, first delegation
        "coder gave up",
        calls(("delegate", {"agent": "planner", "task": "help"})),  # coder's model, second delegation
        "coder gave up again",
        "Done twice.",
    )
    result = planner.run("build it", AgentContext())
    first = json.loads(result.tool_calls[0].value)
    assert first == {"ok": True, "agent": "coder", "output": "coder gave up"}
    assert result.tool_calls[2].error.endswith("(limits.max_tool_calls_per_turn = 2)")
    inner = [c.messages[-1]["content"] for c in llm.calls if "Maximum delegation depth" in c.messages[-1]["content"]]
    assert inner and "Maximum delegation depth (1) reached. Cannot delegate further." in inner[0]


def test_yaml_delegates_naming_an_unknown_agent_is_a_clear_error():
    bad = TEAM.replace("delegates: [coder]", "delegates: [coderr]")
    with pytest.raises(
        ConfigError, match=r"agents.planner.delegates: no agent or workflow named 'coderr'; did you mean 'coder'\?"
    ):
        parse_config(bad, env={})


def test_yaml_limits_must_be_whole_numbers():
    bad = TEAM.replace("max_tool_calls_per_turn: 2", "max_tool_calls_per_turn: -2")
    with pytest.raises(ConfigError, match="max_tool_calls_per_turn"):
        parse_config(bad, env={})


def test_yaml_delegates_on_a_factory_agent_say_where_the_tools_must_come_from():
    app = parse_config(
        TEAM.replace(
            "  writer: {}",
            "  writer: {factory: 'edgevox.examples.home_robot:build_home_robot_agent', delegates: [coder]}",
        ),
        env={},
    )
    with pytest.raises(ConfigError, match=r"agents.writer.delegates: an agent built by a factory gets its tools"):
        make_agents(app, ScriptedLLM(default="Okay."))


@tool
def meet(ctx: AgentContext = None) -> str:  # type: ignore[assignment]  # injected by the tool runner
    """Wait for the other counter, then report."""
    ctx.deps["together"].wait()  # a barrier: passes only when both counters are here at once
    ctx.deps["entered"].set()
    ctx.deps["gate"].wait(5)  # held shut by the test while it looks at a background delegation
    return f"{ctx.agent_name} counted"


CREW = """\
llm: {engine: edgevox.testing:ScriptedLLM}
audio:
  input: {source: text}
  output: {sink: none}
orchestration:
  delegation: {max_concurrency: 2}
agents:
  planner:
    instructions: Planner.
    decoder: free_text
    delegates: [red, blue]
  red: {instructions: Counter., decoder: free_text, tools: ["tests.orchestration.test_delegation:meet"]}
  blue: {instructions: Counter., decoder: free_text, tools: ["tests.orchestration.test_delegation:meet"]}
"""


def crew_model(planner_says):
    """Counters call ``meet``; the planner says what ``planner_says(last_message)`` returns."""

    def reply(messages, grammar):
        system, last = messages[0]["content"], messages[-1]["content"]
        if system.startswith("Planner."):
            return planner_says(last)
        return calls(("meet", {}))

    return ScriptedLLM(reply)


def test_yaml_delegates_run_in_parallel_and_in_the_background(bus):
    def planner_says(last):
        if "tool ran" in last or "tool was" in last:
            return "Reported."
        if "both" in last:
            return calls(
                ("delegate", {"agent": "red", "task": "count"}), ("delegate", {"agent": "blue", "task": "count"})
            )
        if "later" in last:
            return calls(("delegate", {"agent": "red", "task": "count", "background": True}))
        if "status" in last:
            return calls(("list_processes", {"include_completed": True}))
        return calls(("get_process_output", {"process_id": last.rsplit(" ", 1)[-1]}))

    agents = make_agents(parse_config(CREW, env={}), crew_model(planner_says))
    planner = agents["planner"]
    gate, entered = threading.Event(), threading.Event()
    gate.set()
    deps = {"together": threading.Barrier(2, timeout=5), "gate": gate, "entered": entered}
    both = planner.run("count both", AgentContext(session_id="s", deps=deps))  # red and blue met: at once
    assert [json.loads(tr.value)["output"] for tr in both.tool_calls] == ["red counted", "blue counted"]
    assert both.text == "Reported."

    gate.clear(), entered.clear()
    alone = AgentContext(session_id="s", bus=bus, deps={**deps, "together": threading.Barrier(1)})
    started = json.loads(planner.run("count red later", alone).tool_calls[0].value)
    pid = started["process_id"]
    assert started["status"] == "running" and entered.wait(5)
    listed = json.loads(planner.run("status?", alone).tool_calls[0].value)["data"]
    assert [(p["process_id"], p["agent"], p["status"]) for p in listed] == [(pid, "red", "active")]
    finished = threading.Event()
    bus.add_observer(lambda e: isinstance(e, DelegationFinished) and e.delegation_id == pid and finished.set())
    gate.set()
    assert finished.wait(5)
    out = json.loads(planner.run(f"output of {pid}", alone).tool_calls[0].value)["data"]
    assert out == {"process_id": pid, "agent": "red", "status": "completed", "output": "red counted"}
