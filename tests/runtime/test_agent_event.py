"""EdgeVox's spellings: ad-hoc ``AgentEvent(kind, payload)``, callable unsubscribe handles,
``stop(timeout=)``, and one clear line for each bad argument (issue 12)."""

from __future__ import annotations

import pytest

import edgevox
import edgevox.agents
from edgevox.errors import ArgumentError
from edgevox.runtime.background import AgentState, BackgroundAgent
from edgevox.runtime.blackboard import Blackboard
from edgevox.runtime.bus import MAX_AD_HOC_ROUTES
from edgevox.runtime.context import AgentContext
from edgevox.runtime.events import (
    MAX_PAYLOAD_DEPTH,
    AgentEvent,
    Event,
    StopEvent,
    event_from_dict,
)
from edgevox.runtime.messages import send_message, subscribe_inbox
from edgevox.runtime.runtime import Runtime

from .conftest import Ping, RecordingAgent


def test_an_agent_event_carries_its_own_kind_and_a_copy_of_its_json_payload():
    reading = {"sensor": "bumper", "where": ("hall", 2), "level": 3.5, "ok": None, "tags": [True]}
    event = AgentEvent(kind="sensor_alert", payload=reading, agent_name="imu")
    reading["level"] = 99.0
    assert event.kind == "sensor_alert" and event.source == event.agent_name == "imu"
    assert event.payload == {"sensor": "bumper", "where": ["hall", 2], "level": 3.5, "ok": None, "tags": [True]}
    assert AgentEvent("heartbeat").payload == {} and AgentEvent("heartbeat", None).payload == {}
    assert isinstance(event, Event) and not event.control and not event.is_stream()
    assert edgevox.AgentEvent is AgentEvent and edgevox.agents.AgentEvent is AgentEvent


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        (("",), {}, r"kind = '': must be a non-empty str"),
        ((None,), {}, r"kind = None: must be a non-empty str"),
        (("sensor alert",), {}, r"kind = 'sensor alert': must be a letter, then"),
        (("a/b",), {}, r"it becomes a bus topic and a Zenoh key"),
        (("control.stop",), {}, r"kind = 'control.stop' is the typed event StopEvent; publish that instead"),
        (("voice.hello",), {}, r"'voice.' is edgevox's own namespace; pick another, e.g. 'app.hello'"),
        (("sensor_alert", 37.5), {}, r"payload = 37.5 \(float\): must be a mapping .* payload=\{'value': 37.5\}"),
        (("sensor_alert", "imu"), {}, r"payload = 'imu' \(str\): .* pass agent_name=\.\.\. \(EdgeVox's positional"),
        (("s", {1: "x"}), {}, r"payload has the key 1 \(int\); JSON keys are str"),
        (("s", {"a": [1, float("nan")]}), {}, r"payload\['a'\]\[1\] = nan: JSON has no NaN or Infinity"),
        (("s", {"when": object()}), {}, r"payload\['when'\] = <object object at .*> \(object\): a payload holds JSON"),
        (("s",), {"agent_name": "imu", "source": "gps"}, r"agent_name='imu' and source='gps' differ"),
    ],
)
def test_a_bad_kind_or_payload_is_one_argument_error_naming_it(args, kwargs, match):
    with pytest.raises((ArgumentError, TypeError), match=match) as caught:
        AgentEvent(*args, **kwargs)
    assert "\n" not in str(caught.value)


def test_payload_nesting_is_capped_where_the_bridges_would_refuse_it():
    def nested(depth):
        value: dict = {}
        for _ in range(depth - 1):
            value = {"x": value}
        return value

    assert AgentEvent("deep", nested(MAX_PAYLOAD_DEPTH)).payload
    with pytest.raises(ArgumentError, match=f"nested deeper than {MAX_PAYLOAD_DEPTH} levels"):
        AgentEvent("deep", nested(MAX_PAYLOAD_DEPTH + 1))


def test_subscribers_filter_ad_hoc_events_by_kind_pattern_class_or_star(bus):
    exact, pattern, by_class, star, control = [], [], [], [], []
    bus.subscribe("sensor_alert", exact.append)
    bus.subscribe("sensor_*", pattern.append)
    bus.subscribe(AgentEvent, by_class.append)
    bus.subscribe("*", star.append)
    bus.subscribe("control.*", control.append)
    bus.publish(AgentEvent("sensor_alert", {"level": 3}))
    bus.publish(AgentEvent("sensor_ok"))
    bus.publish(AgentEvent("battery_low", {"percent": 12}))
    bus.publish(StopEvent(reason="e-stop"))
    assert [e.kind for e in exact] == ["sensor_alert"]
    assert [e.kind for e in pattern] == ["sensor_alert", "sensor_ok"]
    assert [e.kind for e in by_class] == ["sensor_alert", "sensor_ok", "battery_low"]
    assert [e.kind for e in star] == ["sensor_alert", "sensor_ok", "battery_low", "control.stop"]
    assert [type(e) for e in control] == [StopEvent]  # an ad-hoc kind can never pose as control


def test_many_ad_hoc_kinds_do_not_grow_the_bus_route_cache_without_bound(bus):
    seen = []
    bus.subscribe("job_*", seen.append)
    for i in range(MAX_AD_HOC_ROUTES + 10):
        bus.publish(AgentEvent(f"job_{i}"))
    assert len(seen) == MAX_AD_HOC_ROUTES + 10
    assert len(bus._route_cache) <= MAX_AD_HOC_ROUTES


def test_an_agent_event_round_trips_through_to_dict():
    event = AgentEvent("sensor_alert", {"level": 3, "where": ["hall"]}, agent_name="imu", session_id="s1")
    data = event.to_dict()
    assert data["kind"] == "sensor_alert" and data["payload"] == {"level": 3, "where": ["hall"]}
    assert event_from_dict(data) == event
    with pytest.raises(KeyError, match="unknown event kind 'sensor_alert'"):
        event_from_dict({"kind": "sensor_alert"})  # no payload: not an ad-hoc event
    with pytest.raises(ValueError, match=r"unknown fields \['payload'\]"):
        event_from_dict({"kind": "control.stop", "payload": {}})  # a typed kind stays typed


def test_the_edgevox_background_agent_example_runs_unchanged(bus):
    """``docs/documentation/multiagent.md`` of EdgeVox, with this library."""

    def trigger(event):
        if event.kind == "sensor_alert":
            return f"Investigate: {event.payload}"
        return None

    agent = RecordingAgent("safety")
    bg = BackgroundAgent(
        agent=agent,
        trigger=trigger,
        subscribe_to="*",
        max_queue=32,
        overflow="drop_oldest",
        restart="transient",
        max_restarts=5,
        restart_window_s=60.0,
    )
    bg.start(AgentContext(bus=bus), bus)
    bus.publish(Ping(n=1))
    bus.publish(AgentEvent(kind="sensor_alert", agent_name="imu", payload={"tilt_deg": 31}))
    assert agent.wait_for(1)
    assert bg.stop(timeout=2.0) and bg.state is AgentState.STOPPED
    assert agent.tasks == ["Investigate: {'tilt_deg': 31}"] and bg.dropped_events == 0


def test_subscription_watch_and_inbox_handles_unsubscribe_when_called(bus):
    seen, watched, inbox = [], [], []
    unsubscribe = bus.subscribe("sensor_alert", seen.append)
    bus.publish(AgentEvent("sensor_alert"))
    assert unsubscribe() is True
    bus.publish(AgentEvent("sensor_alert"))
    assert len(seen) == 1 and not unsubscribe.active

    board = Blackboard()
    unwatch = board.watch("pose", lambda key, old, new: watched.append(new))
    board.set("pose", 1)
    unwatch()
    board.set("pose", 2)
    assert watched == [1] and not unwatch.active and board.watcher_count() == 0
    board.close()

    leave = subscribe_inbox(bus, agent_name="planner", handler=inbox.append)
    send_message(bus, from_agent="ui", to="planner", content="go")
    leave()
    send_message(bus, from_agent="ui", to="planner", content="again")
    assert [m.content for m in inbox] == ["go"]


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda bus: bus.subscribe("*", "not a function"), r"subscribe\('\*', handler='not a function'\): the handler"),
        (lambda bus: bus.subscribe(3, print), r"subscribe\(3\): expected an Event subclass or a topic pattern"),
        (lambda bus: bus.subscribe("", print), r"subscribe\(''\): expected an Event subclass"),
        (lambda bus: bus.subscribe((), print), r"name at least one Event subclass or topic pattern"),
        (lambda bus: bus.add_observer(None), r"add_observer\(None\): the observer must be callable"),
        (
            lambda bus: BackgroundAgent(agent=RecordingAgent("m"), trigger="sensor_alert"),
            r"BackgroundAgent 'm': trigger = 'sensor_alert' is not callable; .* use subscribe_to=",
        ),
        (
            lambda bus: BackgroundAgent(agent=RecordingAgent("m"), subscribe_to=["sensor_alert"]),
            r"BackgroundAgent 'm': subscribe_to: subscribe\(\['sensor_alert'\]\): expected",
        ),
        (lambda bus: BackgroundAgent(factory="agent", name="m"), r"factory = 'agent' is not callable"),
        (lambda bus: Blackboard().watch(None, print), r"watch\(None, ...\): the pattern must be a key"),
        (lambda bus: Blackboard().watch("pose", "print"), r"the watcher must be callable as fn\(key, old, new\)"),
        (
            lambda bus: subscribe_inbox(bus, agent_name="planner", handler=None),
            r"subscribe_inbox\(agent_name='planner', handler=None\): handler must be callable",
        ),
        (lambda bus: subscribe_inbox(bus, agent_name="", handler=print), r"must be the agent's non-empty name"),
    ],
)
def test_bad_arguments_are_refused_at_once_with_one_line(bus, call, match):
    with pytest.raises(TypeError, match=match) as caught:
        call(bus)
    assert "\n" not in str(caught.value)


def test_stop_takes_edgevox_timeout_on_background_agents_and_the_runtime(bus):
    bg = BackgroundAgent(agent=RecordingAgent("a"), trigger=lambda e: None)
    bg.start(AgentContext(bus=bus), bus)
    with pytest.raises(TypeError, match="give timeout_s or timeout, not both"):
        bg.stop(1.0, timeout=2.0)
    assert bg.stop(timeout=2.0) and bg.state is AgentState.STOPPED
    with pytest.raises(ValueError, match="timeout_s = nan"):
        bg.stop(timeout=float("nan"))

    rt = Runtime("r").start()
    assert rt.stop(timeout=2.0)


def test_a_config_task_template_reads_an_ad_hoc_payload():
    """``background_agents[].trigger.task`` (docs/migrating.md): ``{payload[...]}`` placeholders."""
    from edgevox.config.build_background import TemplateTrigger

    trigger = TemplateTrigger("Investigate {payload[sensor]} at level {payload[level]}")
    assert trigger(AgentEvent("sensor_alert", {"sensor": "bumper", "level": 3})) == "Investigate bumper at level 3"
    assert trigger(AgentEvent("sensor_alert")) is None and trigger.missing == 1  # a missing key: not half-filled
