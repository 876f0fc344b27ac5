"""The fakes in edgevox.testing behave like the real engines' contracts."""

from __future__ import annotations

import queue
import threading

import numpy as np
import pytest

import edgevox.testing as testing
from edgevox.engines.base import LLM, STT, TTS, VAD, AudioIn, AudioOut
from edgevox.errors import EngineError, LifecycleError
from edgevox.runtime.context import CancelToken
from edgevox.testing import FakeAudioIn, FakeSTT, FakeTTS, FakeVAD, MemoryAudioOut, ScriptedLLM, split_tokens


def test_public_names_are_pinned():
    assert sorted(testing.__all__) == sorted(
        [
            "FakeAudioIn",
            "FakeSTT",
            "FakeTTS",
            "FakeVAD",
            "LLMCall",
            "MemoryAudioOut",
            "PulseServer",
            "PulseUnavailable",
            "STTCall",
            "ScriptedLLM",
            "TTSCall",
            "private_pulseaudio",
            "pulseaudio_installed",
            "reinitialize_portaudio",
            "split_tokens",
        ]
    )


def test_every_fake_satisfies_its_protocol():
    assert isinstance(FakeVAD(), VAD)
    assert isinstance(FakeSTT(), STT)
    assert isinstance(ScriptedLLM(), LLM)
    assert isinstance(FakeTTS(), TTS)
    assert isinstance(FakeAudioIn(), AudioIn)
    assert isinstance(MemoryAudioOut(), AudioOut)


def test_fake_vad_is_an_energy_threshold():
    vad = FakeVAD(frame_ms=20, threshold_rms=0.05)
    assert vad.is_speech(np.full(320, 0.1, np.float32))
    assert not vad.is_speech(np.full(320, 0.01, np.float32))
    with pytest.raises(ValueError, match="expected 320"):
        vad.is_speech(np.zeros(100, np.float32))


def test_fake_stt_queue_mapping_function_and_exhaustion():
    stt = FakeSTT(["go", "stop"], default=None)
    assert stt.transcribe(np.zeros(10), vocabulary=["go"]).text == "go"
    assert stt.transcribe(np.zeros(20)).text == "stop"
    with pytest.raises(EngineError, match="exhausted"):
        stt.transcribe(np.zeros(5))
    assert [c.samples for c in stt.calls] == [10, 20, 5]
    assert stt.calls[0].vocabulary == ("go",)
    assert FakeSTT({16000: "one second"}).transcribe(np.zeros(16000)).text == "one second"
    assert FakeSTT(lambda a: f"{a.shape[0]}").transcribe(np.zeros(7)).text == "7"


def test_fake_stt_gate_holds_a_transcription_in_progress():
    gate = threading.Event()
    stt = FakeSTT(["hello"], gate=gate)
    result = []
    worker = threading.Thread(target=lambda: result.append(stt.transcribe(np.zeros(1)).text))
    worker.start()
    assert stt.started.wait(2.0)
    assert not result
    gate.set()
    worker.join(2.0)
    assert result == ["hello"]


def test_scripted_llm_streams_word_by_word_and_records_the_call():
    llm = ScriptedLLM(["Hello there, robot."])
    pieces = list(llm.stream([{"role": "user", "content": "hi"}], grammar='root ::= "x"', max_tokens=10))
    assert pieces == ["Hello", " there,", " robot."]
    call = llm.calls[0]
    assert call.messages == [{"role": "user", "content": "hi"}]
    assert call.grammar == 'root ::= "x"'
    assert call.tokens_yielded == 3 and not call.cancelled and call.finished.is_set()
    assert "".join(split_tokens("  a b  ")) == "  a b  "


def test_scripted_llm_honours_max_tokens_stop_and_exhaustion():
    llm = ScriptedLLM(["one two three four", "left. STOP right"])
    assert "".join(llm.stream([], max_tokens=2)) == "one two"
    assert "".join(llm.stream([], stop=["STOP"])) == "left. "
    with pytest.raises(EngineError, match="no scripted reply"):
        list(llm.stream([]))
    assert ScriptedLLM(default="ok").complete([]) == "ok"
    assert (
        ScriptedLLM(lambda messages, grammar: messages[-1]["content"].upper()).complete(
            [{"role": "user", "content": "hi"}]
        )
        == "HI"
    )


def test_scripted_llm_gate_paces_tokens_and_cancel_stops_mid_stream():
    gate = threading.Semaphore(0)
    llm = ScriptedLLM(["a b c d e f"], gate=gate)
    token = CancelToken()
    pieces: queue.Queue[str | None] = queue.Queue()

    def consume():
        for piece in llm.stream([], cancel=token):
            pieces.put(piece)
        pieces.put(None)

    worker = threading.Thread(target=consume)
    worker.start()
    assert llm.started.wait(2.0)
    with pytest.raises(queue.Empty):
        pieces.get(timeout=0.05)  # nothing without the gate
    gate.release()
    assert pieces.get(timeout=2.0) == "a"
    gate.release()
    assert pieces.get(timeout=2.0) == " b"
    token.cancel("barge-in")  # wakes the gate; no further token is produced
    assert pieces.get(timeout=2.0) is None
    worker.join(2.0)
    assert llm.calls[0].cancelled and llm.calls[0].tokens_yielded == 2


def test_scripted_llm_serialises_concurrent_streams():
    llm = ScriptedLLM(default="x y z")
    threads = [threading.Thread(target=lambda: list(llm.stream([]))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(2.0)
    assert len(llm.calls) == 4 and llm.peak_concurrency == 1


def test_fake_tts_length_is_proportional_to_text_and_split_by_sentence():
    tts = FakeTTS(sample_rate_hz=16000, ms_per_char=10)
    chunks = list(tts.synthesize("Hello. World!"))
    assert [c.shape[0] for c in chunks] == [tts.samples_for("Hello."), tts.samples_for("World!")]
    assert chunks[0].shape[0] == 960
    assert np.max(np.abs(chunks[0])) > 0.1
    assert tts.calls[0].text == "Hello. World!" and tts.calls[0].samples == 1920


def test_fake_audio_in_cuts_blocks_and_ends_with_eof():
    mic = FakeAudioIn(np.ones(700, np.float32), block_ms=20)
    with pytest.raises(LifecycleError):
        mic.read(0)
    mic.start()
    blocks = [mic.read(0), mic.read(0), mic.read(0)]
    assert [b.shape[0] for b in blocks] == [320, 320, 320]
    assert blocks[2][60] == 0.0  # zero padded
    assert mic.read(0) is None
    mic.feed_silence(0.02)
    mic.close()
    assert mic.read(0) is not None
    with pytest.raises(EOFError):
        mic.read(0)
    with pytest.raises(EOFError):
        mic.read(0)


def test_memory_out_controlled_playback_and_clear():
    out = MemoryAudioOut(sample_rate_hz=16000, auto_play=False)
    out.start()
    out.write(np.ones(1000, np.float32))
    out.write(np.ones(500, np.float32) * 0.5)
    assert out.playing and out.played_samples == 0 and out.queued_samples == 1500
    assert out.advance(1200) == 1200
    assert out.played_samples == 1200
    assert out.clear() == 300
    assert not out.playing and out.drain(0)
    assert out.clears == [300]
    assert out.played_audio().shape[0] == 1200 and out.written_audio().shape[0] == 1500


def test_memory_out_auto_play_and_drain_waits_for_the_test():
    out = MemoryAudioOut(auto_play=True)
    out.start()
    out.write(np.ones(10, np.float32))
    assert out.played_samples == 10 and out.drain(0)
    manual = MemoryAudioOut(auto_play=False)
    manual.start()
    manual.write(np.ones(10, np.float32))
    assert not manual.drain(0.01)
    threading.Thread(target=manual.advance, args=(10,)).start()
    assert manual.drain(2.0)
