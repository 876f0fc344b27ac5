"""Delivery as RoomKit means it: Queued waits for idle like WaitForIdle, RoomKit's spellings
(``buffer``, ``playback_timeout``, the strategy names as strings), and no result is ever lost.
Time is driven with an injected clock and the pure ``pump()``."""

from __future__ import annotations

import threading

import pytest

from edgevox.errors import ArgumentError, ConfigError
from edgevox.orchestration import (
    DeliveryWorker,
    Immediate,
    Queued,
    VoiceActivityState,
    WaitForIdle,
    build_orchestration,
)
from edgevox.orchestration.delivery import resolve_delivery
from edgevox.orchestration.events import DeliveryAfter, DeliveryBefore
from edgevox.voice.events import SpeechEnded, SpeechStarted, TurnDone, TurnStarted


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def collect():
    out = []
    return out, lambda items: out.append([i.text for i in items])


def test_queued_never_speaks_while_the_user_is_talking_and_batches_what_piled_up():
    clock = Clock()
    voice = VoiceActivityState(clock=clock)
    out, sink = collect()
    q = Queued(voice, buffer_s=1.0, timeout_s=30.0, sink=sink, clock=clock)
    voice.user_speech_started()
    q.submit("the kitchen is clear")
    clock.now += 5
    assert q.pump() == 0  # the user is still talking
    q.submit("the battery is at 80 percent")
    voice.user_speech_ended()
    clock.now += 0.5
    assert q.pump() == 0 and q.next_due_s() == 0.5  # not silent long enough
    voice.robot_started()  # the robot answers the user: still not idle
    clock.now += 3
    assert q.pump() == 0
    voice.robot_finished()
    clock.now += 1.0
    assert q.pump() == 2 and out == [["the kitchen is clear", "the battery is at 80 percent"]]


def test_queued_delivers_anyway_after_the_timeout(bus, recorded, of_kind):
    clock = Clock()
    voice = VoiceActivityState(clock=clock)
    out, sink = collect()
    q = Queued(voice, buffer_s=1.0, timeout_s=10.0, sink=sink, clock=clock, publish=bus.publish)
    voice.user_speech_started()
    q.submit("urgent", session_id="s")
    clock.now += 9.9
    assert q.pump() == 0
    clock.now += 0.2
    assert q.pump() == 1 and out == [["urgent"]]
    assert of_kind(recorded, DeliveryBefore)[0].timed_out


def test_queued_in_a_delivery_worker_waits_for_the_voice_channel(bus):
    voice = VoiceActivityState()
    voice.attach(bus)
    delivered = threading.Event()
    texts = []
    q = Queued(
        voice, buffer_s=0.0, timeout_s=60.0, sink=lambda items: (texts.extend(i.text for i in items), delivered.set())
    )
    worker = DeliveryWorker(q, voice=voice)
    worker.start()
    bus.publish(SpeechStarted(turn_id=1))
    q.submit("background result")
    assert not delivered.is_set() and q.pending == 1
    bus.publish(SpeechEnded(turn_id=1))
    bus.publish(TurnStarted(turn_id=1))
    assert not delivered.is_set() and q.pending == 1
    bus.publish(TurnDone(turn_id=1))
    assert delivered.wait(5) and texts == ["background result"]
    assert worker.stop(2.0)
    voice.detach()


@pytest.mark.parametrize("cls", [WaitForIdle, Queued])
def test_roomkit_spellings_buffer_and_playback_timeout(cls):
    d = cls(buffer=2.5, playback_timeout=15.0)
    assert (d.buffer_s, d.buffer, d.timeout_s) == (2.5, 2.5, 15.0)
    with pytest.raises(ArgumentError, match="give buffer_s= or buffer="):
        cls(buffer=1.0, buffer_s=1.0)
    with pytest.raises(ArgumentError, match="need buffer_s >= 0"):
        cls(buffer=-1.0)


def test_roomkit_spellings_in_yaml():
    coord = build_orchestration(
        {"delivery": {"strategy": "queued", "buffer": 0.5, "playback_timeout": 12.0}}, {"a": object()}
    )
    assert isinstance(coord.delivery, Queued) and (coord.delivery.buffer_s, coord.delivery.timeout_s) == (0.5, 12.0)
    with pytest.raises(ConfigError, match="give `buffer_s` or `buffer`"):
        build_orchestration({"delivery": {"buffer": 0.5, "buffer_s": 0.5}}, {"a": object()})


@pytest.mark.parametrize(
    ("name", "cls"), [("immediate", Immediate), ("wait_for_idle", WaitForIdle), ("queued", Queued)]
)
def test_strategy_names_resolve_to_their_class(name, cls):
    assert type(resolve_delivery(name)) is cls
    given = Immediate()
    assert resolve_delivery(given) is given and resolve_delivery(None) is None


@pytest.mark.parametrize("bad", ["later", 3, "WaitForIdle"])
def test_an_unknown_strategy_is_refused_in_one_line(bad):
    with pytest.raises(ArgumentError) as err:
        resolve_delivery(bad)
    assert "one of 'immediate', 'wait_for_idle', 'queued'" in str(err.value) and "\n" not in str(err.value)


def test_a_failing_sink_keeps_the_result_and_says_so(bus, recorded, of_kind):
    def unplugged(items):
        raise OSError("speaker unplugged")

    d = Immediate(unplugged, publish=bus.publish)
    d.submit("the kitchen is clear", session_id="k")
    d.submit("other session", session_id="x")
    after = of_kind(recorded, DeliveryAfter)[0]
    assert not after.ok and "speaker unplugged" in after.error and after.texts == ["the kitchen is clear"]
    assert [i.text for i in d.take_undelivered("k")] == ["the kitchen is clear"]
    assert [i.text for i in d.undelivered] == ["other session"] and d.delivered == 0


def test_a_strategy_without_a_sink_keeps_what_it_could_not_deliver(bus, recorded, of_kind):
    clock = Clock()
    d = WaitForIdle(buffer_s=1.0, clock=clock, publish=bus.publish)
    d.submit("first", session_id="k")  # the voice state was just created: not idle yet
    assert d.pending == 1 and d.undelivered == []
    clock.now += 1.0
    assert d.pump() == 1 and [i.text for i in d.undelivered] == ["first"]
    assert "no sink" in of_kind(recorded, DeliveryAfter)[0].error
    d.submit("second", session_id="k")  # idle now: "delivered" at once, to nobody, so kept
    assert [i.text for i in d.take_undelivered("k", pending=True)] == ["first", "second"]
