"""Latency features of the VoiceLoop: speculative STT at pauses and TTS priority over the LLM.

Driven by the fakes (no models, no sleeps): gates and events order every step.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

from edgevox.runtime.events import StopEvent
from edgevox.testing import FakeAudioIn, FakeSTT, FakeTTS, MemoryAudioOut, ScriptedLLM, split_tokens
from edgevox.voice.events import (
    Chunk,
    ChunkSynthesized,
    SpeechEnded,
    Stopped,
    Token,
    TranscriptEvent,
    TurnDone,
    TurnStarted,
)
from edgevox.voice.loop import VoiceSettings
from edgevox.voice.segmenter import SegmenterSettings

from .test_loop import FIRST, REPLY, make_loop, start
from .voice_helpers import silence, tone

RATE = 16000
# 20 ms frames: the pause fires after 100 ms of silence, the endpoint after 300 ms.
SEGMENTER = SegmenterSettings(frame_ms=20, pre_roll_ms=0, min_speech_ms=60, end_silence_ms=300, pause_ms=100)


def by_length(threshold_s: float, short: str, long: str):
    """A FakeSTT script: ``short`` for audio shorter than ``threshold_s``, else ``long``."""
    return lambda audio: short if audio.shape[0] < threshold_s * RATE else long


def test_speculative_transcript_of_the_pause_is_used_when_the_endpoint_confirms_it(bus, recorder, loops):
    stt = FakeSTT(lambda audio: "turn left")
    mic = FakeAudioIn()
    loop, _ = make_loop(bus, stt=stt, audio_in=mic, segmenter=SEGMENTER)
    start(loops, loop)
    mic.feed(np.concatenate([tone(0.5), silence(0.16)]))  # past the pause, before the endpoint
    assert stt.started.wait(5)  # STT runs while the endpoint is still waiting for silence
    assert not recorder.of(SpeechEnded)
    mic.feed(silence(0.5))
    transcript = recorder.wait_for(TranscriptEvent)
    ended = recorder.of(SpeechEnded)[0]
    assert transcript.text == "turn left" and transcript.speculative
    assert transcript.turn_id == ended.turn_id
    recorder.wait_for(TurnStarted, text="turn left")
    assert loop.wait_idle(5)
    # One transcription only: the pause's audio (speech + 100 ms), shorter than the utterance.
    assert len(stt.calls) == 1
    assert stt.calls[0].samples == int(0.6 * RATE)
    assert ended.duration_s == pytest.approx(0.8)


def test_speech_after_the_pause_discards_the_speculation(bus, recorder, loops):
    stt = FakeSTT(by_length(0.9, "turn", "turn left now"))
    mic = FakeAudioIn()
    # STT speculation only: a speculative reply would keep the loop busy until the endpoint.
    loop, _ = make_loop(bus, stt=stt, audio_in=mic, segmenter=SEGMENTER, speculative_reply=False)
    start(loops, loop)
    mic.feed(np.concatenate([tone(0.5), silence(0.16)]))
    assert stt.started.wait(5)
    assert loop.wait_idle(5)  # the speculation has finished: "turn" is ready but unconfirmed
    mic.feed(tone(0.5))  # the user goes on speaking...
    mic.close()  # ...and the input ends mid-speech: no pause covers the end
    assert loop.wait_input_done(5)
    transcripts = recorder.of(TranscriptEvent)
    assert [(t.text, t.speculative) for t in transcripts] == [("turn left now", False)]
    assert [e.text for e in recorder.of(TurnStarted)] == ["turn left now"]
    assert [c.samples for c in stt.calls] == [int(0.6 * RATE), int(1.16 * RATE)]


def test_a_later_pause_replaces_a_stale_one(bus, recorder, loops):
    stt = FakeSTT(by_length(0.9, "turn", "turn left now"))
    mic = FakeAudioIn()
    # STT speculation only: a speculative reply would keep the loop busy until the endpoint.
    loop, _ = make_loop(bus, stt=stt, audio_in=mic, segmenter=SEGMENTER, speculative_reply=False)
    start(loops, loop)
    mic.feed(np.concatenate([tone(0.5), silence(0.16)]))
    assert stt.started.wait(5)
    assert loop.wait_idle(5)
    mic.feed(np.concatenate([tone(0.5), silence(0.6)]))
    transcript = recorder.wait_for(TranscriptEvent)
    assert transcript.text == "turn left now"
    assert loop.wait_idle(5)
    assert [e.text for e in recorder.of(TurnStarted)] == ["turn left now"]
    assert all(c.samples != int(0.6 * RATE) for c in stt.calls[1:])  # the stale audio is never reused


def test_a_speculative_stop_is_not_acted_on_before_the_endpoint(bus, recorder, loops):
    # The user pauses after "stop" and goes on: "stop ... the music" is the final transcript
    # here scripted as an ordinary request, so no safety stop may fire from the pause alone.
    stt = FakeSTT(by_length(0.9, "stop", "play the music"))
    mic = FakeAudioIn()
    loop, _ = make_loop(bus, stt=stt, audio_in=mic, segmenter=SEGMENTER)
    start(loops, loop)
    mic.feed(np.concatenate([tone(0.5), silence(0.16)]))
    assert stt.started.wait(5)
    assert loop.wait_idle(5)
    assert not recorder.of(Stopped) and not recorder.of(StopEvent) and not recorder.of(TranscriptEvent)
    mic.feed(np.concatenate([tone(0.5), silence(0.6)]))
    recorder.wait_for(TurnStarted, text="play the music")
    assert loop.wait_idle(5)
    assert not recorder.of(Stopped) and not recorder.of(StopEvent)


def test_final_utterances_go_before_a_pending_speculation(bus, recorder, loops):
    gate = threading.Event()
    stt = FakeSTT(lambda audio: f"{audio.shape[0]} samples", gate=gate)
    mic = FakeAudioIn()
    loop, _ = make_loop(bus, stt=stt, audio_in=mic, segmenter=SEGMENTER)
    start(loops, loop)
    # Utterance 1 ends while STT is held on its speculation; utterance 2 then pauses.
    mic.feed(np.concatenate([tone(0.5), silence(0.16)]))
    assert stt.started.wait(5)
    mic.feed(np.concatenate([silence(0.3), tone(0.5), silence(0.16)]))
    recorder.wait_until(lambda: len(recorder.of(SpeechEnded)) == 1)
    gate.set()
    mic.feed(silence(0.5))
    recorder.wait_until(lambda: len(recorder.of(TranscriptEvent)) == 2)
    assert loop.wait_idle(5)
    first, second = recorder.of(TranscriptEvent)
    assert first.turn_id < second.turn_id and first.speculative
    assert [e.text for e in recorder.of(TurnStarted)] == [first.text, second.text]


def test_speculation_can_be_turned_off(bus, recorder, loops):
    stt = FakeSTT(lambda audio: "turn left")
    mic = FakeAudioIn()
    loop, _ = make_loop(bus, stt=stt, audio_in=mic, segmenter=SEGMENTER, speculative_stt=False)
    start(loops, loop)
    mic.feed(np.concatenate([tone(0.5), silence(0.6)]))
    transcript = recorder.wait_for(TranscriptEvent)
    assert not transcript.speculative
    assert [c.samples for c in stt.calls] == [int(0.8 * RATE)]


def test_invalid_tts_priority_is_rejected():
    with pytest.raises(ValueError, match="tts_priority_ms"):
        VoiceSettings(tts_priority_ms=-1)


# --- TTS priority ------------------------------------------------------------------------------


def _tokens_stay_at(recorder, count: int, window_s: float) -> bool:
    """True if the turn produced no token beyond ``count`` within ``window_s`` (a negative check)."""
    try:
        recorder.wait_until(lambda: len(recorder.of(Token)) > count, window_s)
    except AssertionError:
        return True
    return False


def test_llm_waits_while_the_first_chunk_is_synthesized(bus, recorder, loops):
    tts_gate = threading.Semaphore(0)
    llm = ScriptedLLM([REPLY])
    loop, _ = make_loop(bus, llm=llm, tts=FakeTTS(gate=tts_gate), input_stall_s=None)
    start(loops, loop)
    loop.submit_text("hello")
    recorder.wait_for(Chunk, index=0)
    # A final "." waits for the next delta (so "3.5" is never cut): the chunk came with token 7.
    first_tokens = len(split_tokens(FIRST)) + 1
    # TTS is held on the first chunk with nothing buffered: no token is pulled meanwhile.
    assert _tokens_stay_at(recorder, first_tokens, 0.3)
    assert llm.calls[0].tokens_yielded == first_tokens
    tts_gate.release()  # the first chunk is written: generation resumes
    recorder.wait_for(Chunk, index=1)
    for _ in range(5):
        tts_gate.release()
    recorder.wait_for(TurnDone, turn_id=1)
    assert [e.text for e in recorder.of(Chunk)] == [FIRST, REPLY[len(FIRST) + 1 :]]
    assert "".join(e.text for e in recorder.of(Token)) == REPLY


def test_without_tts_priority_the_llm_runs_ahead(bus, recorder, loops):
    tts_gate = threading.Semaphore(0)
    loop, _ = make_loop(bus, tts=FakeTTS(gate=tts_gate), tts_priority_ms=0, input_stall_s=None)
    start(loops, loop)
    loop.submit_text("hello")
    recorder.wait_until(lambda: len(recorder.of(Token)) == len(split_tokens(REPLY)))  # while TTS is held
    assert len(recorder.of(Chunk)) == 2 and not recorder.of(ChunkSynthesized)
    for _ in range(5):
        tts_gate.release()
    recorder.wait_for(TurnDone, turn_id=1)


def test_llm_resumes_once_enough_audio_is_buffered(bus, recorder, loops):
    # 10 ms per character: the 30-character first chunk buffers 300 ms (< 400 ms threshold),
    # so while chunk 2 is synthesized the LLM waits; with a 200 ms threshold it does not.
    tts_gate = threading.Semaphore(0)
    reply = f"{FIRST} {FIRST} {FIRST}"
    loop, _ = make_loop(
        bus,
        llm=ScriptedLLM([reply]),
        tts=FakeTTS(gate=tts_gate),
        audio_out=MemoryAudioOut(auto_play=False),
        tts_priority_ms=200,
        input_stall_s=None,
    )
    start(loops, loop)
    loop.submit_text("hello")
    recorder.wait_for(Chunk, index=0)
    tts_gate.release()  # chunk 1 written (300 ms buffered, nothing played)
    recorder.wait_for(Chunk, index=2)  # the LLM ran on although chunk 2 is held in TTS
    for _ in range(5):
        tts_gate.release()
    recorder.wait_until(lambda: len(recorder.of(ChunkSynthesized)) == 3)
    loop.audio_out.advance(10**7)
    recorder.wait_for(TurnDone, turn_id=1)


def test_a_stop_ends_the_wait_for_tts_at_once(bus, recorder, loops):
    tts_gate = threading.Semaphore(0)
    llm = ScriptedLLM([REPLY])
    loop, _ = make_loop(bus, llm=llm, tts=FakeTTS(gate=tts_gate), input_stall_s=None)
    start(loops, loop)
    loop.submit_text("hello")
    recorder.wait_for(Chunk, index=0)
    loop.safety_stop()  # TTS is still held: the turn worker must not wait for it
    done = recorder.wait_for(TurnDone, turn_id=1, timeout_s=2)
    assert done.status == "stopped"
    assert llm.calls[0].finished.wait(5) and llm.calls[0].cancelled
    tts_gate.release()  # let the TTS thread leave the stale chunk (its audio is dropped)
    tts_gate.release()  # and speak the confirmation
    assert loop.wait_idle(5)
    # The stale chunk's audio is dropped: the only audio written is the stop's confirmation.
    assert [d.reply_text for d in recorder.of(TurnDone) if d.turn_id != 1] == ["Stopped."]
    confirmation = sum(len(a) for a in FakeTTS().synthesize("Stopped."))
    assert sum(len(w) for w in loop.audio_out.writes) == confirmation
