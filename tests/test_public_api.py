"""Pins the public names users import (issue 2): ``from edgevox import ...`` and ``from edgevox.agents import ...``."""

from __future__ import annotations

import inspect
import subprocess
import sys

import edgevox
import edgevox.agents
import edgevox.runtime

RUNTIME_NAMES = {
    "AgentContext",
    "AgentEvent",
    "AgentMessage",
    "AgentPool",
    "BackgroundAgent",
    "Blackboard",
    "CancelToken",
    "EventBus",
    "Runtime",
    "RestartSupervisor",
    "debounce_trigger",
    "send_message",
    "subscribe_inbox",
    "request",
    "reply",
    "EXIT",
}


def test_edgevox_exports_the_runtime_names_from_their_defining_modules():
    for name in RUNTIME_NAMES | {"StopReport", "EdgeVoxError", "Event", "InterruptEvent", "StopEvent"}:
        assert name in edgevox.__all__, name
        assert getattr(edgevox, name) is getattr(edgevox.runtime, name, None) or name == "EdgeVoxError", name


def test_edgevox_agents_re_exports_the_same_objects():
    for name in RUNTIME_NAMES:
        assert getattr(edgevox.agents, name) is getattr(edgevox, name), name


def test_runtime_all_is_pinned():
    assert set(edgevox.runtime.__all__) >= RUNTIME_NAMES | {"Mailbox", "Subscription", "StopReport", "Requester"}
    for name in edgevox.runtime.__all__:
        assert hasattr(edgevox.runtime, name), name


def test_documented_call_shapes():
    bg = inspect.signature(edgevox.BackgroundAgent)
    defaults = {k: p.default for k, p in bg.parameters.items()}
    assert list(bg.parameters)[:8] == [
        "agent",
        "trigger",
        "subscribe_to",
        "max_queue",
        "overflow",
        "restart",
        "max_restarts",
        "restart_window_s",
    ]
    assert (defaults["subscribe_to"], defaults["max_queue"], defaults["overflow"]) == ("*", 32, "drop_oldest")
    assert (defaults["restart"], defaults["max_restarts"], defaults["restart_window_s"]) == ("transient", 5, 60.0)
    assert inspect.signature(edgevox.Blackboard).parameters["async_watchers"].default is False
    assert list(inspect.signature(edgevox.Blackboard.post_request).parameters) == [
        "self",
        "request_key",
        "task",
        "timeout",
        "if_absent",
    ]
    assert list(inspect.signature(edgevox.Blackboard.reply_to).parameters) == ["self", "request", "result"]
    for fn, names in (
        (edgevox.send_message, {"from_agent", "to", "content", "topic"}),
        (edgevox.subscribe_inbox, {"agent_name", "handler"}),
        (edgevox.debounce_trigger, {"trigger", "interval_s", "edge"}),
        (edgevox.AgentPool.start_background, {"name", "trigger", "max_queue", "overflow", "restart", "max_restarts"}),
        (edgevox.AgentPool.make_ctx, {"overrides"}),
    ):
        assert names <= set(inspect.signature(fn).parameters), fn


def test_import_edgevox_is_light():
    code = (
        "import sys, edgevox; from edgevox import Blackboard, Runtime;"
        "heavy = {'numpy','llama_cpp','faster_whisper','ctranslate2','piper','onnxruntime','sounddevice','pydantic'};"
        "print(sorted(heavy & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
