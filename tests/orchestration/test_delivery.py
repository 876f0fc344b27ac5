from __future__ import annotations

import threading

from edgevox.orchestration import DeliveryWorker, Immediate, Queued, VoiceActivityState, WaitForIdle
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


def test_immediate_delivers_at_once_with_before_and_after_events(bus, recorded, of_kind):
    out, sink = collect()
    Immediate(sink, publish=bus.publish).submit("battery at 20 percent", session_id="s1")
    assert out == [["battery at 20 percent"]]
    before, after = of_kind(recorded, DeliveryBefore), of_kind(recorded, DeliveryAfter)
    assert before[0].seq < after[0].seq and before[0].session_id == after[0].session_id == "s1"
    assert after[0].ok


def test_wait_for_idle_waits_for_robot_quiet_and_user_silence():
    clock = Clock()
    voice = VoiceActivityState(clock=clock)
    out, sink = collect()
    d = WaitForIdle(voice, buffer_s=1.0, timeout_s=30.0, sink=sink, clock=clock)
    voice.robot_started()
    d.submit("the kitchen is clear")
    assert out == []
    clock.now += 5
    assert d.pump() == 0  # still speaking
    voice.robot_finished()
    clock.now += 0.5
    assert d.pump() == 0  # not silent long enough
    voice.user_speech_started()
    clock.now += 2
    assert d.pump() == 0  # the user is talking
    voice.user_speech_ended()
    clock.now += 0.99
    assert d.pump() == 0
    clock.now += 0.02
    assert d.pump() == 1 and out == [["the kitchen is clear"]]


def test_wait_for_idle_delivers_anyway_after_the_timeout(bus, recorded, of_kind):
    clock = Clock()
    voice = VoiceActivityState(clock=clock)
    out, sink = collect()
    d = WaitForIdle(voice, buffer_s=1.0, timeout_s=10.0, sink=sink, clock=clock, publish=bus.publish)
    voice.user_speech_started()
    d.submit("urgent", session_id="s")
    clock.now += 9.9
    assert d.pump() == 0 and d.next_due_s() is not None
    clock.now += 0.2
    assert d.pump() == 1
    ev = of_kind(recorded, DeliveryBefore)[0]
    assert ev.timed_out and ev.waited_s >= 10.0


def test_queued_batches_results_within_the_buffer():
    clock = Clock()
    out, sink = collect()
    q = Queued(buffer_s=2.0, sink=sink, clock=clock)
    q.submit("one")
    clock.now += 1.0
    q.submit("two")
    assert q.pump() == 0 and q.next_due_s() == 1.0
    clock.now += 1.0
    assert q.pump() == 2 and out == [["one", "two"]]
    q.submit("three")
    clock.now += 2.0
    q.pump()
    assert out == [["one", "two"], ["three"]]


def test_a_failing_sink_is_reported_in_the_after_event(bus, recorded, of_kind):
    def sink(items):
        raise RuntimeError("speaker unplugged")

    Immediate(sink, publish=bus.publish).submit("x")
    after = of_kind(recorded, DeliveryAfter)[0]
    assert not after.ok and "speaker unplugged" in after.error


def test_voice_activity_follows_voice_loop_events(bus):
    clock = Clock()
    voice = VoiceActivityState(clock=clock)
    voice.attach(bus)
    bus.publish(SpeechStarted(turn_id=1))
    assert voice.user_speaking and voice.silent_for_s() == 0
    bus.publish(SpeechEnded(turn_id=1))
    bus.publish(TurnStarted(turn_id=1))
    assert voice.robot_speaking
    bus.publish(TurnDone(turn_id=1))
    clock.now += 3
    assert not voice.robot_speaking and voice.silent_for_s() == 3
    voice.detach()


def test_delivery_worker_delivers_when_the_voice_channel_goes_quiet(bus):
    voice = VoiceActivityState()
    voice.attach(bus)
    delivered = threading.Event()
    texts = []
    d = WaitForIdle(
        voice, buffer_s=0.0, timeout_s=60.0, sink=lambda items: (texts.extend(i.text for i in items), delivered.set())
    )
    worker = DeliveryWorker(d, voice=voice)
    worker.start()
    bus.publish(TurnStarted(turn_id=1))
    d.submit("background result")
    assert not delivered.is_set() and d.pending == 1
    bus.publish(TurnDone(turn_id=1))
    assert delivered.wait(5) and texts == ["background result"]
    assert worker.stop(2.0)
    voice.detach()
