"""The whole loop on the real embedded default models with real human speech (WAV in -> WAV out).

Marked ``models``: runs in CI and fails (never skips) if a shipped model or adapter is
broken. Only the speech folder may be absent (it lives outside the repository).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from edgevox.agents.llm_agent import LLMAgent
from edgevox.engines.audio_wav import WavFileIn, WavFileOut, read_wav
from edgevox.runtime.bus import EventBus
from edgevox.voice.events import FirstAudio, Stopped, TranscriptEvent, TurnDone
from edgevox.voice.loop import VoiceLoop, VoiceSettings

from .voice_helpers import Recorder

pytestmark = pytest.mark.models


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def test_real_speech_in_gives_a_transcript_and_a_spoken_reply_out(real_engines, speech_dir, tmp_path):
    bus = EventBus("models-test")
    recorder = Recorder(bus)
    agent = LLMAgent("chat", llm=real_engines.llm, reply_max_tokens=40)
    agent.warmup()
    mic = WavFileIn(speech_dir / "classic/goforward.wav", leading_silence_s=0.3, trailing_silence_s=1.0)
    out_path = tmp_path / "reply.wav"
    out = WavFileOut(out_path, sample_rate_hz=real_engines.tts.sample_rate_hz)
    loop = VoiceLoop(bus, real_engines.vad, real_engines.stt, agent, real_engines.tts, mic, out, VoiceSettings())
    loop.start()
    try:
        assert loop.wait_input_done(120), "the loop did not finish the utterance in 120 s"
    finally:
        report = loop.stop(10)
        bus.close()
    assert report.clean, report
    transcripts = recorder.of(TranscriptEvent)
    assert len(transcripts) == 1, [t.text for t in transcripts]
    heard = words(transcripts[0].text)
    assert heard[:2] == ["go", "forward"] and ("ten" in heard or "10" in heard), transcripts[0].text
    done = recorder.of(TurnDone)
    assert done and done[0].status == "completed" and done[0].reply_text
    assert recorder.of(FirstAudio)
    audio, rate = read_wav(out_path)
    assert rate == real_engines.tts.sample_rate_hz
    assert audio.shape[0] > 0.3 * rate, "less than 0.3 s of reply audio came out"
    assert float(np.sqrt(np.mean(audio**2))) > 0.01, "the reply audio is silent"
    # The reply is remembered for the next turn.
    assert agent.history()[-1]["role"] == "assistant"


def test_real_spoken_stop_command_triggers_the_safety_stop(real_engines, speech_dir, tmp_path):
    bus = EventBus("models-stop")
    recorder = Recorder(bus)
    agent = LLMAgent("chat", llm=real_engines.llm, reply_max_tokens=40)
    mic = WavFileIn(speech_dir / "commands/felix_stop_2.wav", leading_silence_s=0.3, trailing_silence_s=1.0)
    out = WavFileOut(tmp_path / "none.wav", sample_rate_hz=real_engines.tts.sample_rate_hz)
    loop = VoiceLoop(bus, real_engines.vad, real_engines.stt, agent, real_engines.tts, mic, out, VoiceSettings())
    loop.start()
    try:
        assert loop.wait_input_done(120)
    finally:
        assert loop.stop(10).clean
        bus.close()
    stopped = recorder.of(Stopped)
    assert stopped and stopped[0].phrase == "stop", [t.text for t in recorder.of(TranscriptEvent)]
    # The stop never reached the agent: the only turn is the confirmation, said once.
    assert [t.reply_text for t in recorder.of(TurnDone)] == ["Stopped."]
    assert agent.history() == []
