"""The voice loop through real sounddevice streams: a private PulseAudio with a null sink.

Speech is played into the sink by a second output stream; the loop's microphone is
the sink's monitor (so it hears the speech), and the loop's reply is played to the
same sink (so, with the default half-duplex echo guard, it also hears itself and
must ignore that). Skips only when the ``pulseaudio`` binary is absent.
"""

from __future__ import annotations

import re

import pytest

from edgevox.agents.llm_agent import LLMAgent
from edgevox.engines.audio_wav import read_wav
from edgevox.engines.resample import resample
from edgevox.runtime.bus import EventBus
from edgevox.voice.events import FirstAudio, SpeechStarted, TranscriptEvent, TurnDone
from edgevox.voice.loop import VoiceLoop, VoiceSettings

from .voice_helpers import Recorder

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
            bus, real_engines.vad, real_engines.stt, agent, real_engines.tts, mic, speaker, VoiceSettings()
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
