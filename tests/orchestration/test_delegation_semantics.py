"""supyagent's delegation semantics through edgevox's public API (classes; the YAML side,
``agents.<name>.delegates`` / ``limits``, is in ``test_delegation.py``).

The ``delegates`` allowlist and its exact refusal, the depth limit's exact text, ``limits``
(``max_tool_calls_per_turn``, ``max_total_tool_calls``), delegate calls in one model message
running concurrently, background delegations the model follows with ``list_processes`` /
``get_process_output`` / ``kill_process``, the registry's ``get_agent`` / ``get_depth`` /
``stats``, and a delegation's depth kept across processes over a real Zenoh bridge.
Concurrency is proven with barriers and events, never by sleeping."""

from __future__ import annotations

import json
import threading

import pytest

from edgevox.agents.decoders import FreeTextDecoder
from edgevox.agents.llm_agent import LLMAgent
from edgevox.agents.tool_calls import ToolLimits
from edgevox.agents.tools import tool
from edgevox.errors import ArgumentError
from edgevox.orchestration import Delegator
from edgevox.orchestration.delegation_tools import delegate as generic_delegate
from edgevox.orchestration.delegation_tools import delegation_tools
from edgevox.orchestration.tools import delegate as delegate_from_tools
from edgevox.runtime.activities import SAFETY_STOP_REASON, ActivityRegistry
from edgevox.runtime.context import AgentContext
from edgevox.testing import ScriptedLLM

DEPTH_5 = "Maximum delegation depth (5) reached. Cannot delegate further."


def calls(*specs: tuple[str, dict]) -> str:
    """One model message with these tool calls."""
    return json.dumps([{"name": n, "arguments": a} for n, a in specs])


def boss(delegator: Delegator, *replies: str, name: str = "boss", extra=(), **kw) -> LLMAgent:
    """An LLM agent whose scripted model says ``replies`` in order, with its delegation tools."""
    return LLMAgent(
        name,
        "",
        tools=[*delegation_tools(delegator, name), *extra],
        llm=ScriptedLLM(list(replies), default="Okay."),
        decoder=FreeTextDecoder(),
        **kw,
    )


def tool_json(result, i: int) -> dict:
    return json.loads(result.tool_calls[i].value)


# -- 1. the delegates allowlist ------------------------------------------------------------------


def test_an_agent_delegates_only_to_its_delegates_with_supyagents_refusal(Scripted):
    coder = Scripted("coder", lambda t, c: f"code for {t}")
    writer = Scripted("writer", "docs")
    d = Delegator({"coder": coder, "writer": writer}, delegates={"planner": ["coder"]})
    planner = boss(
        d,
        calls(("delegate", {"agent": "coder", "task": "a parser"})),
        "The coder wrote it.",
        name="planner",
    )
    # The model is offered exactly its delegates.
    spec = planner.tool("delegate").parameters["properties"]["agent"]
    assert spec["enum"] == ["coder"]
    result = planner.run("build a parser", AgentContext())
    assert tool_json(result, 0) == {"ok": True, "agent": "coder", "output": "code for a parser"}
    assert result.text == "The coder wrote it."
    # A target outside the list (through the generic tool, no enum) is refused in supyagent's words.
    refused = d.delegate("writer", "docs please", AgentContext(agent_name="planner"))
    assert refused.ok is False
    assert refused.error == "Agent 'writer' is not in the delegates list. Available: coder"
    assert writer.tasks == []
    # An agent with no list delegates to nobody: no tools at all.
    assert delegation_tools(d, "writer") == []
    assert d.delegate("coder", "x", AgentContext(agent_name="writer")).error.startswith(
        "Agent 'coder' is not in the delegates list"
    )


def test_self_delegation_is_refused_unless_the_agent_lists_itself(Scripted):
    # Wrong before: any agent could delegate to any other, itself included.
    worker = Scripted("worker", lambda t, c: c.agent_name)

    def loops(task, ctx):  # the worker asks itself through the delegate tool
        return worker.call_tool(generic_delegate, {"agent": "worker", "task": task}, ctx)

    worker.behaviour = loops
    d = Delegator({"worker": worker})
    out = d.delegate("worker", "go", AgentContext())
    assert json.loads(out.text)["error"] == "Agent 'worker' is not in the delegates list. Available: none"
    assert len(worker.tasks) == 1
    # Listed explicitly, it may (the depth limit still ends the recursion).
    worker.tasks.clear(), worker.tool_results.clear()
    d = Delegator({"worker": worker}, delegates={"worker": ["worker"]})
    d.delegate("worker", "go", AgentContext())
    assert len(worker.tasks) == 5
    assert json.loads(worker.tool_results[0])["error"] == DEPTH_5  # the deepest one answers first


def test_delegate_is_still_importable_from_orchestration_tools():
    assert delegate_from_tools is generic_delegate
    assert set(generic_delegate.parameters["properties"]) == {"agent", "task", "background"}


# -- 2. the depth limit's exact text -------------------------------------------------------------


def test_depth_limit_error_is_supyagents_text(Scripted):
    agents = {}
    for i in range(7):
        agents[f"a{i}"] = Scripted(
            f"a{i}",
            lambda t, c, i=i: agents[f"a{i}"].call_tool(generic_delegate, {"agent": f"a{i + 1}", "task": t}, c),
        )
    agents["a7"] = Scripted("a7", "bottom")
    Delegator(agents).delegate("a0", "go", AgentContext())
    assert [c.depth for c in agents["a4"].contexts] == [5]
    assert json.loads(agents["a4"].tool_results[-1]) == {"ok": False, "error": DEPTH_5}
    assert agents["a5"].tasks == []


# -- 3. limits -----------------------------------------------------------------------------------


def counter():
    made = []

    @tool
    def beep(n: int = 0) -> str:
        """Beep once.

        Args:
            n: Which beep.
        """
        made.append(n)
        return f"beep {n}"

    return beep, made


def test_max_tool_calls_per_turn_refuses_the_rest_and_the_model_reads_why():
    beep, made = counter()
    agent = LLMAgent(
        "robot",
        "",
        tools=[beep],
        llm=ScriptedLLM(
            [calls(*[("beep", {"n": i}) for i in range(3)]), "Two beeps.", calls(("beep", {"n": 9})), "One."]
        ),
        decoder=FreeTextDecoder(),
        max_tool_hops=5,
        limits={"max_tool_calls_per_turn": 2},
    )
    result = agent.run("beep three times", AgentContext())
    assert made == [0, 1]
    refused = result.tool_calls[2]
    assert (refused.ok, refused.error_kind) == (False, "not_run")
    assert refused.error == "not run because the turn already made 2 tool calls (limits.max_tool_calls_per_turn = 2)"
    # The model read the reason with the results (in its next prompt).
    prompt = agent.llm.calls[1].messages[-1]["content"]
    assert "limits.max_tool_calls_per_turn = 2" in prompt
    # Per turn: the next turn may call tools again.
    assert agent.run("beep once more", AgentContext()).tool_calls[0].ok
    assert made == [0, 1, 9]


def test_max_total_tool_calls_counts_a_whole_conversation_across_turns():
    beep, made = counter()
    replies = [calls(("beep", {"n": 1}), ("beep", {"n": 2})), "ok", calls(("beep", {"n": 3}), ("beep", {"n": 4})), "ok"]
    agent = LLMAgent(
        "robot", "", tools=[beep], llm=ScriptedLLM([*replies, *replies[:2]]), decoder=FreeTextDecoder(),
        limits=ToolLimits(max_total_tool_calls=3),
    )  # fmt: skip
    agent.run("two beeps", AgentContext(session_id="kitchen"))
    second = agent.run("two more", AgentContext(session_id="kitchen"))
    assert made == [1, 2, 3]
    assert second.tool_calls[1].error.startswith(
        "not run because this conversation already made 3 tool calls (limits.max_total_tool_calls = 3)"
    )
    assert agent.limits.total("kitchen") == 3
    # Another conversation has its own count.
    agent.run("two beeps", AgentContext(session_id="hall"))
    assert made == [1, 2, 3, 1, 2]


def test_bad_limits_are_clear_errors():
    with pytest.raises(ArgumentError, match=r"limits.max_tool_calls_per_turn = -1: must be a whole number >= 0"):
        LLMAgent("a", limits={"max_tool_calls_per_turn": -1})
    with pytest.raises(ArgumentError, match=r"unknown limits \['max_calls'\]"):
        LLMAgent("a", limits={"max_calls": 3})


# -- 4. parallel delegations started by the model --------------------------------------------------


def test_delegate_calls_in_one_message_run_concurrently_capped_results_in_call_order(Scripted):
    both_running = threading.Barrier(2, timeout=5)  # passes only if a and b run at the same time
    order: list[str] = []
    lock = threading.Lock()

    def meet(name):
        def work(task, ctx):
            with lock:
                order.append(name)  # the order they start in
            both_running.wait()
            return f"{name} did {task}"

        return work

    def alone(task, ctx):
        with lock:
            order.append("c")
        return f"c did {task}"

    beep, made = counter()

    @tool
    def note() -> str:
        """Note the moment."""
        with lock:
            order.append("note")
        return "noted"

    d = Delegator(
        {"a": Scripted("a", meet("a")), "b": Scripted("b", meet("b")), "c": Scripted("c", alone)},
        delegates={"boss": ["a", "b", "c"]},
        max_concurrency=2,
    )
    message = calls(
        ("delegate", {"agent": "a", "task": "1"}),
        ("delegate", {"agent": "b", "task": "2"}),
        ("delegate", {"agent": "c", "task": "3"}),
        ("note", {}),
        ("delegate", {"agent": "c", "task": "4"}),
    )
    agent = boss(d, message, "All done.", extra=[note], max_tool_hops=6)
    result = agent.run("split the work", AgentContext())
    outputs = [tool_json(result, i).get("output") for i in (0, 1, 2, 4)]
    assert outputs == ["a did 1", "b did 2", "c did 3", "c did 4"]
    assert result.tool_calls[3].value == "noted"
    assert sorted(order[:2]) == ["a", "b"] and order[2:] == ["c", "note", "c"]  # others keep their order
    assert d.peak_concurrency == 2  # a and b together, never three at once
    assert result.text == "All done."


# -- 5. background delegations ----------------------------------------------------------------------


def test_background_delegation_followed_with_list_processes_and_get_process_output(Scripted):
    gate, entered = threading.Event(), threading.Event()
    scout = Scripted("scout", lambda t, c: (entered.set(), gate.wait(5), "the door is shut")[2])
    d = Delegator({"scout": scout}, delegates={"boss": ["scout"]})
    agent = boss(
        d,
        calls(("delegate", {"agent": "scout", "task": "check the door", "background": True})),
        "I sent the scout.",
    )
    ctx = AgentContext(session_id="s1")
    started = agent.run("check the door, I'll wait", ctx)
    reply = tool_json(started, 0)
    assert (reply["ok"], reply["agent"], reply["status"]) == (True, "scout", "running")
    pid = reply["process_id"]
    assert started.text == "I sent the scout."
    assert entered.wait(5)  # it runs

    agent.llm.push(calls(("list_processes", {})), "The scout is still out.")
    listing = tool_json(agent.run("is the scout back?", ctx), 0)
    assert listing == {
        "ok": True,
        "data": [{"process_id": pid, "agent": "scout", "status": "active", "task": "check the door"}],
    }
    # Another conversation does not see it.
    agent.llm.push(calls(("get_process_output", {"process_id": pid})), "No.")
    assert tool_json(agent.run("what did it find?", AgentContext(session_id="s2")), 0) == {
        "ok": False,
        "error": f"Process {pid} not found",
    }

    gate.set()
    assert d.process(pid).wait(5)
    agent.llm.push(calls(("get_process_output", {"process_id": pid})), "The door is shut.")
    out = tool_json(agent.run("what did it find?", ctx), 0)
    assert out == {
        "ok": True,
        "data": {"process_id": pid, "agent": "scout", "status": "completed", "output": "the door is shut"},
    }
    agent.llm.push(calls(("list_processes", {})), "Nothing runs.")
    assert tool_json(agent.run("anything running?", ctx), 0)["data"] == []
    assert d.close() == []


def test_a_safety_stop_cancels_background_delegations_and_kill_process_cancels_one(Scripted):
    waiting = threading.Barrier(3, timeout=5)

    def patrol(task, ctx):
        waiting.wait()
        ctx.cancel_token.wait(5)
        return "late result"

    d = Delegator({"patrol": Scripted("patrol", patrol)}, delegates={"boss": ["patrol"]})
    activities = ActivityRegistry()
    ctx = AgentContext(session_id="s", activities=activities)
    start = calls(("delegate", {"agent": "patrol", "task": "east", "background": True}),
                  ("delegate", {"agent": "patrol", "task": "west", "background": True}))  # fmt: skip
    agent = boss(d, start, "Two patrols out.")
    out = agent.run("patrol both wings", ctx)
    first, second = (tool_json(out, i)["process_id"] for i in (0, 1))
    waiting.wait()  # both run
    agent.llm.push(calls(("kill_process", {"process_id": first})), "Stopped the east patrol.")
    assert tool_json(agent.run("stop the east patrol", ctx), 0)["ok"] is True
    assert d.process(first).wait(5) and d.process(first).status == "cancelled"
    assert d.process(second).status == "active"
    activities.cancel_all(SAFETY_STOP_REASON)
    assert d.process(second).wait(5)
    assert (d.process(second).status, d.process(second).output) == ("cancelled", "")
    assert d.close() == []


def test_close_names_background_delegations_still_running(Scripted):
    release = threading.Event()
    entered = threading.Event()
    stubborn = Scripted("stubborn", lambda t, c: (entered.set(), release.wait(5), "done")[2])
    d = Delegator({"stubborn": stubborn})
    handle = d.delegate_background("stubborn", "ignore stops", AgentContext())
    assert entered.wait(5)
    handle.cancel("stop")
    assert d.close(timeout_s=0.05) == ["edgevox-delegate-bg-stubborn"]
    release.set()
    assert d.close(timeout_s=5) == []
    assert handle.status == "cancelled"  # its late result was discarded


# -- 6. registry queries ------------------------------------------------------------------------------


def test_registry_get_agent_get_depth_and_stats(Scripted):
    seen = {}
    inner = Scripted("inner", lambda t, c: seen.setdefault("inner", c.delegation_id) and "inner done")

    def outer_work(task, ctx):
        seen["outer"] = ctx.delegation_id
        return outer.call_tool(generic_delegate, {"agent": "inner", "task": task}, ctx)

    outer = Scripted("outer", outer_work)
    d = Delegator({"outer": outer, "inner": inner})
    d.delegate("outer", "job", AgentContext())
    reg = d.registry
    assert reg.get_agent(seen["outer"]) is outer and reg.get_agent(seen["inner"]) is inner
    assert (reg.get_depth(seen["outer"]), reg.get_depth(seen["inner"]), reg.get_depth("nobody")) == (1, 2, 0)
    stats = reg.stats()
    assert {k: stats[k] for k in ("total", "active", "completed", "failed")} == {
        "total": 2,
        "active": 0,
        "completed": 2,
        "failed": 0,
    }
    assert reg.cleanup() == 2 and reg.get_agent(seen["outer"]) is None


# -- 6b. depth carried across processes over a real Zenoh bridge (loopback) ------------------------


@pytest.mark.zenoh
def test_a_delegation_crossing_the_zenoh_bridge_keeps_its_depth(Scripted):
    pytest.importorskip("zenoh", reason="eclipse-zenoh is not installed: pip install 'edgevox[zenoh]'")
    import socket

    from edgevox.integrations.config import ZenohBridgeConfig
    from edgevox.integrations.zenoh_bridge import ZenohBridge
    from edgevox.orchestration.remote_delegation import RemoteAgent, serve_delegations
    from edgevox.runtime.bus import EventBus

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    def ping(name, nxt):  # each agent delegates to the next one, on the other robot
        return Scripted(name, lambda t, c: here[name].call_tool(generic_delegate, {"agent": nxt, "task": t}, c))

    here = {"a1": ping("a1", "b1"), "b0": ping("b0", "a1"), "b1": ping("b1", "a2")}
    bus_a, bus_b = EventBus("a"), EventBus("b")
    serve = {"serve_blackboard": True, "serve_keys": ["delegate/*"], "namespace": "edgevox/team"}
    delegator_a, delegator_b = Delegator({}, max_depth=3), Delegator({}, max_depth=3)
    bridge_a = ZenohBridge(
        bus_a,
        ZenohBridgeConfig(enabled=True, listen=[f"tcp/127.0.0.1:{port}"], **serve),
        answer=serve_delegations(delegator_a),
        bridge_id="a",
    )
    bridge_b = ZenohBridge(
        bus_b,
        ZenohBridgeConfig(enabled=True, connect=[f"tcp/127.0.0.1:{port}"], **serve),
        answer=serve_delegations(delegator_b),
        bridge_id="b",
    )
    # Robot A runs a1 (b0, b1 live on B); robot B runs b0 and b1 (a1, a2 live on A).
    delegator_a.agents.update(a1=here["a1"], b0=RemoteAgent("b0", bridge_a), b1=RemoteAgent("b1", bridge_a))
    delegator_b.agents.update(
        b0=here["b0"], b1=here["b1"], a1=RemoteAgent("a1", bridge_b), a2=RemoteAgent("a2", bridge_b)
    )
    try:
        bridge_a.start(), bridge_b.start()
        assert bridge_a.wait_for_peers(1, 10) and bridge_b.wait_for_peers(1, 10)
        out = delegator_a.delegate("b0", "patrol", AgentContext(session_id="s"))
    finally:
        assert bridge_a.stop() and bridge_b.stop()
        bus_a.close(), bus_b.close()
    # A -> B (b0, depth 1) -> A (a1, depth 2) -> B (b1, depth 3): b1 is refused, in supyagent's words.
    assert [c.depth for c in here["b0"].contexts] == [1]
    assert [c.depth for c in here["a1"].contexts] == [2]
    assert [c.depth for c in here["b1"].contexts] == [3]
    assert json.loads(here["b1"].tool_results[0]) == {
        "ok": False,
        "error": "Maximum delegation depth (3) reached. Cannot delegate further.",
    }
    assert out.ok and json.loads(out.text)["ok"] is True  # every level answered with what it had
