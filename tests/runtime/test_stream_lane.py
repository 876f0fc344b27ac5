"""Stream events (reply deltas, tokens, feedback ticks) yield to real events in a full mailbox.

Issue 12: under the EdgeVox documentation's own ``subscribe_to="*", max_queue=32`` example, a
sensor alert was evicted by the reply deltas of a long answer.
"""

from __future__ import annotations

import threading

import pytest

from edgevox.agents.events import AgentReply, ReplyDelta, SkillStateEvent
from edgevox.runtime.background import BackgroundAgent
from edgevox.runtime.context import AgentContext
from edgevox.runtime.events import AgentEvent, InterruptEvent
from edgevox.runtime.mailbox import Mailbox
from edgevox.voice.events import Chunk, Token

from .conftest import Ping, RecordingAgent, Tick


def _kinds(mailbox: Mailbox) -> list[str]:
    return [f"{e.kind}:{getattr(e, 'n', '')}" for e in mailbox.drain()]


def test_edgevox_marks_its_high_rate_events_as_stream_events_and_nothing_else():
    assert ReplyDelta(text="Hel").is_stream() and Token(text="lo").is_stream()
    assert SkillStateEvent(skill="drive", state="running", feedback={"distance_m": 1.5}).is_stream()
    for real in (
        SkillStateEvent(skill="drive", state="running"),  # the goal started: a state change
        SkillStateEvent(skill="drive", state="succeeded", feedback={"distance_m": 3.0}),
        AgentReply(text="done"),
        Chunk(text="Hello."),
        AgentEvent("sensor_alert", {"level": 3}),
        InterruptEvent(),
    ):
        assert not real.is_stream(), real


@pytest.mark.parametrize("overflow", ["drop_oldest", "drop_new", "block"])
def test_a_data_event_takes_the_place_of_the_oldest_stream_event_whatever_the_policy(overflow):
    box = Mailbox(max_queue=3, overflow=overflow, block_timeout_s=5.0)
    assert box.put(Tick(n=1)) and box.put(Ping(n=1)) and box.put(Tick(n=2))
    assert box.put(Ping(n=2))  # full: Tick 1 yields (no wait, even under "block")
    assert (box.dropped, box.stream_dropped) == (0, 1)
    assert _kinds(box) == ["test.ping:1", "test.tick:2", "test.ping:2"]  # publication order kept


def test_a_stream_event_only_ever_evicts_another_stream_event():
    box = Mailbox(max_queue=2, overflow="drop_oldest")
    assert box.put(Ping(n=1)) and box.put(Ping(n=2))
    assert not box.put(Tick(n=1))  # full of real events: the tick is the one discarded
    assert _kinds(box) == ["test.ping:1", "test.ping:2"] and (box.dropped, box.stream_dropped) == (0, 1)

    assert box.put(Ping(n=3)) and box.put(Tick(n=2))
    assert box.put(Tick(n=3))  # drop_oldest among the stream events
    assert _kinds(box) == ["test.ping:3", "test.tick:3"] and (box.dropped, box.stream_dropped) == (0, 2)


def test_drop_new_discards_an_incoming_stream_event_and_block_makes_it_wait_for_room():
    box = Mailbox(max_queue=1, overflow="drop_new")
    assert box.put(Tick(n=1)) and not box.put(Tick(n=2))
    assert _kinds(box) == ["test.tick:1"] and box.stream_dropped == 1

    box = Mailbox(max_queue=1, overflow="block", block_timeout_s=5.0)
    assert box.put(Tick(n=1))
    taker = threading.Thread(target=lambda: box.get(timeout=5.0))
    waiting = threading.Thread(target=lambda: box.put(Tick(n=2)))
    waiting.start()
    taker.start()  # makes room: the blocked stream event goes in
    waiting.join(5.0)
    taker.join(5.0)
    assert _kinds(box) == ["test.tick:2"] and box.stream_dropped == 0


def test_data_events_still_overflow_among_themselves_and_counts_stay_apart():
    box = Mailbox(max_queue=2, overflow="drop_oldest")
    for n in range(4):
        box.put(Ping(n=n))
    assert _kinds(box) == ["test.ping:2", "test.ping:3"] and (box.dropped, box.stream_dropped) == (2, 0)


def test_a_queued_subscriber_reports_stream_drops_apart_from_real_drops(bus):
    entered, release, done, seen = threading.Event(), threading.Event(), threading.Event(), []

    def slow(event):
        if not seen:
            entered.set()
            release.wait(5.0)
        seen.append(event)
        if event.kind == "test.ping" and event.n == 1:
            done.set()

    sub = bus.subscribe("*", slow, queued=True, max_queue=4, name="ui")
    bus.publish(Ping(n=0))
    assert entered.wait(5.0)  # the worker took it and is busy in the handler
    for n in range(10):
        bus.publish(Tick(n=n))
    bus.publish(Ping(n=1))
    assert sub.dropped == 0 and sub.stream_dropped == 7 and bus.stats["stream_dropped"] == {"ui": 7}
    release.set()
    assert done.wait(5.0) and sub.close(5.0)
    assert [e.kind for e in seen] == ["test.ping"] + ["test.tick"] * 3 + ["test.ping"]


def test_a_star_background_agent_keeps_a_sensor_alert_published_during_a_500_delta_reply(bus):
    """The EdgeVox doc's example: ``subscribe_to="*", max_queue=32``, a trigger on ``sensor_alert``."""
    busy, release = threading.Event(), threading.Event()

    def investigate(task, ctx):
        if task == "warm-up":
            busy.set()
            release.wait(5.0)  # the agent is busy while the reply streams: its mailbox fills
        return task

    def trigger(event):
        if event.kind == "sensor_alert":
            return f"Investigate: {event.payload}"
        return "warm-up" if event.kind == "warm_up" else None

    agent = RecordingAgent("monitor", behaviour=investigate)
    bg = BackgroundAgent(agent=agent, trigger=trigger, subscribe_to="*", max_queue=32, overflow="drop_oldest")
    bg.start(AgentContext(bus=bus), bus)
    bus.publish(AgentEvent("warm_up"))
    assert busy.wait(5.0)
    for i in range(500):
        if i == 250:
            bus.publish(AgentEvent(kind="sensor_alert", payload={"sensor": "bumper", "level": 3}, agent_name="imu"))
        bus.publish(ReplyDelta(agent="assistant", text=f"w{i} "))
    bus.publish(AgentReply(agent="assistant", text="the whole reply"))
    release.set()
    assert agent.wait_for(2)
    assert bg.stop(5.0)
    assert agent.tasks == ["warm-up", "Investigate: {'sensor': 'bumper', 'level': 3}"]
    assert bg.dropped_events == 0  # no real event was lost: not the alert, not the AgentReply
    assert bg.dropped_stream_events == 500 - (32 - 2)  # the deltas made room for the alert and the reply


def test_a_real_llm_agents_500_token_reply_does_not_push_an_alert_out_of_a_star_agents_mailbox(bus):
    """The same, with the deltas published by an LLMAgent streaming a 500-word reply."""
    from edgevox.agents.llm_agent import LLMAgent
    from edgevox.testing.fake_engines import ScriptedLLM

    gate, deltas, busy, release = threading.Semaphore(0), threading.Condition(), threading.Event(), threading.Event()
    count = [0]

    def on_delta(_event):
        with deltas:
            count[0] += 1
            deltas.notify_all()

    bus.subscribe(ReplyDelta, on_delta)
    seen = RecordingAgent("monitor", behaviour=lambda task, ctx: busy.set() or release.wait(5.0))
    bg = BackgroundAgent(
        agent=seen, trigger=lambda e: f"alert {e.payload['level']}" if e.kind == "sensor_alert" else None, max_queue=32
    )
    bg.start(AgentContext(bus=bus), bus)
    words = " ".join(f"w{i}" for i in range(500))
    assistant = LLMAgent("assistant", llm=ScriptedLLM([words], gate=gate), reply_max_tokens=1000)
    result = []
    talker = threading.Thread(target=lambda: result.append(assistant.run("talk", AgentContext(bus=bus))))
    talker.start()
    bus.publish(AgentEvent("sensor_alert", {"level": 1}))  # occupies the monitor while the reply streams
    assert busy.wait(5.0)
    gate.release(250)
    with deltas:
        assert deltas.wait_for(lambda: count[0] == 250, 5.0)
    bus.publish(AgentEvent("sensor_alert", {"level": 2}))
    gate.release(250)
    talker.join(10.0)
    release.set()
    assert seen.wait_for(2) and bg.stop(5.0)
    assert count[0] == 500 and len(result[0].text.split()) == 500
    assert seen.tasks == ["alert 1", "alert 2"] and bg.dropped_events == 0 and bg.dropped_stream_events > 400
