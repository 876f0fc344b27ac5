"""The voice loop through real sounddevice streams: a private PulseAudio with a null sink.

Speech is played into the sink by a second output stream; the loop's microphone is
the sink's monitor (so it hears the speech), and the loop's reply is played to the
same sink (so, with the default half-duplex echo guard, it also hears itself and
must ignore that). Skips only when the ``pulseaudio`` binary is absent.
"""

from __future__ import annotations

import contextlib
import re

import pytest

from edgevox.agents.llm_agent import LLMAgent
from edgevox.engines.audio_wav import read_wav
from edgevox.engines.resample import resample
from edgevox.runtime.bus import EventBus
from edgevox.voice.events import (
    ChunkSynthesized,
    EchoDelayMeasured,
    FirstAudio,
    SpeechStarted,
    Stopped,
    TranscriptEvent,
    TurnDone,
)
from edgevox.voice.loop import VoiceLoop, VoiceSettings

from .voice_helpers import Quieter, Recorder
from .wake_audio import joined, silence, speak

pytestmark = [pytest.mark.audio, pytest.mark.models]


def test_loop_hears_speech_from_the_sink_monitor_and_replies_to_the_sink(real_engines, speech_dir):
    from edgevox.testing.pulse import private_pulseaudio, pulseaudio_installed, reinitialize_portaudio

    if not pulseaudio_installed():
        pytest.skip("the pulseaudio binary is absent (apt-get install pulseaudio pulseaudio-utils libportaudio2)")
    from edgevox.engines.audio_sounddevice import SoundDeviceIn, SoundDeviceOut

    speech, rate = read_wav(speech_dir / "classic/goforward.wav")
    speech = resample(speech, rate, 16000)
    with private_pulseaudio(rate_hz=16000):
        reinitialize_portaudio()
        bus = EventBus("pulse-test")
        recorder = Recorder(bus)
        user = SoundDeviceOut(device="pulse", sample_rate_hz=16000, device_rate_hz=16000)
        mic = SoundDeviceIn(device="pulse", device_rate_hz=16000)
        speaker = SoundDeviceOut(device="pulse", sample_rate_hz=real_engines.tts.sample_rate_hz, device_rate_hz=16000)
        agent = LLMAgent("chat", llm=real_engines.llm, reply_max_tokens=30)
        loop = VoiceLoop(
            bus,
            real_engines.vad,
            real_engines.stt,
            agent,
            real_engines.tts,
            mic,
            speaker,
            VoiceSettings(echo_guard="half_duplex"),
        )
        user.start()
        loop.start()
        try:
            user.write(speech)  # the "person" speaks into the room
            done = recorder.wait_for(TurnDone, timeout_s=90)
            recorder.wait_for(FirstAudio, timeout_s=5)
            assert loop.wait_idle(60)
        finally:
            report = loop.stop(10)
            user.stop()
            bus.close()
        reinitialize_portaudio()
    assert report.clean, report
    first = recorder.of(TranscriptEvent)[0]
    assert re.findall(r"[a-z]+", first.text.lower())[:2] == ["go", "forward"], first.text
    assert done.status == "completed" and done.reply_text
    assert speaker.played_samples > 0.3 * real_engines.tts.sample_rate_hz
    # The reply came back through the monitor; half-duplex kept it from becoming a turn.
    assert len(recorder.of(TurnDone)) == 1
    heard_itself = [e for e in recorder.of(SpeechStarted) if e.during_playback]
    assert heard_itself, "the reply played to the sink was not heard back through its monitor"


@pytest.mark.parametrize(("guard", "latency_ms"), [("energy_gate", 300)])
def test_on_a_device_that_plays_300_ms_late_the_robot_never_hears_itself_and_a_stop_over_it_works(
    real_engines, monkeypatch, guard, latency_ms
):
    """``energy_gate`` on a device whose echo comes back 330 ms after PortAudio took the audio
    (PulseAudio asked for 300 ms of latency, as it raises a stream's latency after underruns on
    a loaded CPU, or as a Bluetooth speaker is): the gate follows the measured delay. Before
    it did, the robot took its own reply for a user 3 runs in 3 and answered itself.

    The story (about 48 s) is written far ahead of playback: the gate must still know the level
    of what plays now once more than 30 s is queued (it forgot it, and the rest of a long reply
    passed the gate as a user's speech)."""
    from edgevox.testing import ScriptedLLM
    from edgevox.testing.pulse import private_pulseaudio, pulseaudio_installed, reinitialize_portaudio

    if not pulseaudio_installed():
        pytest.skip("the pulseaudio binary is absent (apt-get install pulseaudio pulseaudio-utils libportaudio2)")
    from edgevox.engines.audio_sounddevice import SoundDeviceIn, SoundDeviceOut

    story = " ".join(
        f"Part {n} of the story is about a robot that walks to the kitchen and back." for n in range(1, 13)
    )
    stop = speak(real_engines.tts, "Stop right now, please stop!", gain=1.0)
    if latency_ms:
        monkeypatch.setenv("PULSE_LATENCY_MSEC", str(latency_ms))  # read by libpulse when each stream connects
    with private_pulseaudio(rate_hz=16000):
        reinitialize_portaudio()
        bus = EventBus("slow-device")
        recorder = Recorder(bus)
        user = SoundDeviceOut(device="pulse", sample_rate_hz=16000, device_rate_hz=16000)
        mic = SoundDeviceIn(device="pulse", device_rate_hz=16000)
        tts = Quieter(real_engines.tts, 0.2)  # the user, near the microphone, is louder than the robot
        speaker = SoundDeviceOut(device="pulse", sample_rate_hz=tts.sample_rate_hz, device_rate_hz=16000)
        agent = LLMAgent("chat", llm=ScriptedLLM(default=story))
        settings = VoiceSettings(echo_guard=guard, barge_in=False)  # only the stop phrase stops it
        loop = VoiceLoop(bus, real_engines.vad, real_engines.stt, agent, tts, mic, speaker, settings)
        user.start()
        loop.start()
        try:
            loop.submit_text("Tell me a story.")
            first = recorder.wait_for(FirstAudio, timeout_s=30)
            # The robot talks; the delay is measured after 3 s of it.
            measured = recorder.wait_for(EchoDelayMeasured, timeout_s=30)

            def written_s() -> float:
                chunks = [e for e in recorder.of(ChunkSynthesized) if e.turn_id == first.turn_id]
                return sum(e.samples for e in chunks) / tts.sample_rate_hz

            recorder.wait_until(lambda: written_s() > 35, timeout_s=60)
            with contextlib.suppress(AssertionError):  # 3 s of the story with more than 30 s queued
                recorder.wait_for(SpeechStarted, timeout_s=3)
            heard_itself = [e.turn_id for e in recorder.of(SpeechStarted)]
            user.write(joined(stop, silence(0.8)))
            stopped = recorder.wait_for(Stopped, timeout_s=30)
            done = recorder.wait_for(TurnDone, timeout_s=10, turn_id=first.turn_id)
            delay_ms = loop.echo_delay_ms
        finally:
            report = loop.stop(10)
            user.stop()
            bus.close()
        reinitialize_portaudio()
    assert report.clean, report
    assert heard_itself == [], f"the robot's own reply passed {guard} as a user's speech"
    assert delay_ms is not None and latency_ms - 50 <= delay_ms <= latency_ms + 150, delay_ms
    assert measured.delay_ms == pytest.approx(delay_ms, abs=20) and measured.correlation >= 0.5, measured
    assert stopped.phrase == "stop" and first.turn_id in (stopped.cancelled_turns or [])
    assert done.status == "stopped" and len(done.spoken_text) < len(story) / 2
