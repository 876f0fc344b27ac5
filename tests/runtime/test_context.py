"""AgentContext.child carries every field; CancelToken tree semantics."""

from __future__ import annotations

import dataclasses
import threading

import pytest

from edgevox.runtime.activities import ActivityRegistry
from edgevox.runtime.blackboard import Blackboard
from edgevox.runtime.bus import EventBus
from edgevox.runtime.context import AgentContext, CancelToken
from edgevox.runtime.speculation import Speculation


def test_child_carries_every_field_and_links_a_fresh_cancel_token():
    bus, board = EventBus("c"), Blackboard(name="c")
    sentinel_values = {
        "bus": bus,
        "blackboard": board,
        "hooks": (object(),),
        "session_id": "s-1",
        "turn_id": 7,
        "agent_name": "parent",
        "depth": 2,
        "deps": {"robot": object()},
        "memory": object(),
        "llm_lock": threading.Lock(),
        "state": {"k": 1},
        "activities": ActivityRegistry("c"),
        "speculation": Speculation(CancelToken()),
        "handoff": object(),
        "handoff_brief": "wants a human; user: help",
        "handoff_chain": ("concierge", "chef"),
        "delegator": object(),
        "delegation_id": "worker-1",
        "channel": "ros2",
    }
    fields = {f.name for f in dataclasses.fields(AgentContext)}
    # a new field added to AgentContext must be added here, so the carry-over is proven for it
    assert fields == set(sentinel_values) | {"cancel_token", "tools"}
    parent = AgentContext(**sentinel_values, tools=(object(),))  # type: ignore[arg-type]
    child = parent.child()
    for name, value in sentinel_values.items():
        assert getattr(child, name) is value, name
    # per-run tools are the one field not inherited: a worker never gets its supervisor's tools
    assert child.tools == () and parent.child(tools=parent.tools).tools == parent.tools
    assert child.cancel_token is not parent.cancel_token
    parent.cancel_token.cancel("barge-in")
    assert child.cancelled and child.cancel_token.reason == "barge-in"
    assert parent.child(depth=3, agent_name="sub").depth == 3
    with pytest.raises(TypeError, match="unknown fields \\['nope'\\]"):
        parent.child(nope=1)
    board.close()
    bus.close()


def test_cancelling_a_child_never_touches_the_parent():
    parent = CancelToken("p")
    child = parent.child()
    child.cancel("timeout")
    assert child.cancelled and not parent.cancelled


def test_cancel_callbacks_run_once_and_a_raising_one_does_not_stop_the_others():
    token, seen = CancelToken(), []
    token.on_cancel(lambda r: 1 / 0)
    token.on_cancel(seen.append)
    assert token.cancel("stop") and not token.cancel("again")
    assert seen == ["stop"]
    token.on_cancel(seen.append)  # already cancelled: called at once
    assert seen == ["stop", "stop"]


def test_cancelled_children_are_forgotten_so_parents_do_not_grow():
    parent = CancelToken()
    for _ in range(100):
        parent.child().cancel()
    kept = parent.child()
    kept.detach()
    assert parent._children == []
