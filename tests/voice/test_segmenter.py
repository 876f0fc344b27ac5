"""Segmenter edge cases, latency statistics, vocabulary extraction and the playback reference."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from edgevox.voice.echo import PlaybackReference
from edgevox.voice.latency import LatencyObserver, percentile
from edgevox.voice.segmenter import (
    FrameSplitter,
    SegmentEnd,
    Segmenter,
    SegmenterSettings,
    SegmentPause,
    SegmentResume,
    SegmentStart,
)
from edgevox.voice.vocabulary import vocabulary_for

FRAME = 320  # 20 ms at 16 kHz


def run(seg: Segmenter, pattern: str):
    """Feed one frame per character ('x' voiced, '.' silent); return (frame index, event) pairs."""
    out = []
    for i, ch in enumerate(pattern):
        frame = np.full(FRAME, 0.5 if ch == "x" else 0.0, dtype=np.float32)
        event = seg.process(frame, ch == "x", (i + 1) * 0.02)
        if event is not None:
            out.append((i, event))
    return out


def test_short_click_does_not_start_an_utterance():
    seg = Segmenter(SegmenterSettings(frame_ms=20, min_speech_ms=100, end_silence_ms=200), 16000)
    assert run(seg, "...xxxx....x.x.x....") == []


def test_start_after_min_speech_and_end_after_silence_with_pre_roll():
    settings = SegmenterSettings(frame_ms=20, pre_roll_ms=100, min_speech_ms=100, end_silence_ms=200, pause_ms=0)
    seg = Segmenter(settings, 16000)
    events = run(seg, "." * 10 + "x" * 20 + "." * 10)
    (i_start, start), (i_end, end) = events
    assert isinstance(start, SegmentStart) and i_start == 14
    assert start.first_voiced_at == pytest.approx(10 * 0.02)
    assert isinstance(end, SegmentEnd) and i_end == 39 and not end.truncated
    assert end.last_voiced_at == pytest.approx(30 * 0.02)
    # 5 pre-roll frames before the 5-frame voiced run, 20 voiced, 10 silent
    assert end.audio.shape[0] == (5 + 20 + 10) * FRAME


def test_pauses_shorter_than_end_silence_stay_in_one_utterance():
    seg = Segmenter(SegmenterSettings(frame_ms=20, min_speech_ms=60, end_silence_ms=200), 16000)
    events = run(seg, "xxxxx" + "....." + "xxxxx" + "." * 12)
    kinds = [type(e).__name__ for _, e in events if not isinstance(e, (SegmentPause, SegmentResume))]
    assert kinds == ["SegmentStart", "SegmentEnd"]


def test_pause_offers_the_audio_so_far_and_the_end_confirms_it():
    settings = SegmenterSettings(frame_ms=20, pre_roll_ms=0, min_speech_ms=60, end_silence_ms=200, pause_ms=60)
    seg = Segmenter(settings, 16000)
    events = run(seg, "xxxxx" + "." * 10)
    (_, start), (i_pause, pause), (i_end, end) = events
    assert isinstance(pause, SegmentPause) and i_pause == 5 + 2  # the third silent frame
    assert pause.audio.shape[0] == (5 + 3) * FRAME
    assert pause.last_voiced_at == pytest.approx(5 * 0.02)
    assert isinstance(end, SegmentEnd) and i_end == 14
    # Everything after the pause's audio is silence: its transcript stands for the utterance.
    assert end.pause_samples == pause.audio.shape[0]
    np.testing.assert_array_equal(end.audio[: end.pause_samples], pause.audio)
    assert not end.audio[end.pause_samples :].any()


def test_speech_after_a_pause_makes_it_stale_and_a_later_pause_counts():
    settings = SegmenterSettings(frame_ms=20, pre_roll_ms=0, min_speech_ms=60, end_silence_ms=200, pause_ms=60)
    seg = Segmenter(settings, 16000)
    events = run(seg, "xxxxx" + "...." + "xxx" + "." * 10)
    pauses = [e for _, e in events if isinstance(e, SegmentPause)]
    (end,) = [e for _, e in events if isinstance(e, SegmentEnd)]
    assert len(pauses) == 2  # one per silence run
    assert end.pause_samples == pauses[1].audio.shape[0] != pauses[0].audio.shape[0]
    # Resumed speech and no later pause: nothing stands for the utterance.
    seg2 = Segmenter(settings, 16000)
    events2 = run(seg2, "xxxxx" + "...." + "xxxx")
    assert any(isinstance(e, SegmentPause) for _, e in events2)
    assert seg2.flush().pause_samples == 0


def test_pause_not_shorter_than_end_silence_is_never_offered():
    settings = SegmenterSettings(frame_ms=20, min_speech_ms=60, end_silence_ms=100, pause_ms=100)
    events = run(Segmenter(settings, 16000), "xxxxx" + "." * 8)
    assert [type(e).__name__ for _, e in events] == ["SegmentStart", "SegmentEnd"]
    assert events[1][1].pause_samples == 0


# Adaptive endpointing: 5 frames (100 ms) once hinted complete, else hold 15 frames (300 ms).
ADAPTIVE = SegmenterSettings(
    frame_ms=20, pre_roll_ms=0, min_speech_ms=60, end_silence_ms=100, hold_silence_ms=300, pause_ms=40
)


def run_hinted(seg: Segmenter, pattern: str, complete: bool | None, *, delay_frames: int = 0):
    """Like :func:`run`, but answer each SegmentPause with ``hint(complete)`` after ``delay_frames``
    (None: never hint)."""
    out, due = [], []
    for i, ch in enumerate(pattern):
        for when, samples in list(due):
            if when == i:
                seg.hint(samples, complete)
        event = seg.process(np.full(FRAME, 0.5 if ch == "x" else 0.0, dtype=np.float32), ch == "x", (i + 1) * 0.02)
        if event is not None:
            out.append((i, event))
        if isinstance(event, SegmentPause) and complete is not None:
            due.append((i + 1 + delay_frames, event.audio.shape[0]))
    return out


def end_index(events) -> int:
    (i,) = [i for i, e in events if isinstance(e, SegmentEnd)]
    return i


def test_a_pause_hinted_complete_ends_after_the_short_silence():
    events = run_hinted(Segmenter(ADAPTIVE, 16000), "xxxxx" + "." * 20, complete=True)
    assert end_index(events) == 5 + 4  # the fifth silent frame


@pytest.mark.parametrize("complete", [False, None])
def test_a_pause_hinted_incomplete_or_not_hinted_holds_for_the_long_silence(complete):
    events = run_hinted(Segmenter(ADAPTIVE, 16000), "xxxxx" + "." * 20, complete=complete)
    assert end_index(events) == 5 + 14  # the fifteenth silent frame


def test_a_late_complete_hint_ends_the_utterance_on_the_next_frame():
    # The pause is the 2nd silent frame (index 6); the hint comes 7 frames later, at index 14.
    events = run_hinted(Segmenter(ADAPTIVE, 16000), "xxxxx" + "." * 20, complete=True, delay_frames=7)
    assert end_index(events) == 14


def test_a_hint_for_another_pause_is_ignored():
    seg = Segmenter(ADAPTIVE, 16000)
    events = []
    for i, ch in enumerate("xxxxx" + "." * 20):
        event = seg.process(np.full(FRAME, 0.5 if ch == "x" else 0.0, dtype=np.float32), ch == "x", (i + 1) * 0.02)
        if isinstance(event, SegmentPause):
            seg.hint(event.audio.shape[0] - FRAME, True)  # not this pause's length
        if event is not None:
            events.append((i, event))
    assert end_index(events) == 5 + 14


def test_speech_after_a_pause_resumes_and_the_old_hint_no_longer_counts():
    seg = Segmenter(ADAPTIVE, 16000)
    events = run_hinted(seg, "xxxxx" + "..." + "xxx" + "." * 20, complete=None)
    (pause_i, pause), second_pause = [(i, e) for i, e in events if isinstance(e, SegmentPause)]
    (resume_i, resume), *more = [(i, e) for i, e in events if isinstance(e, SegmentResume)]
    assert not more and resume_i == 8 and pause_i == 6
    assert resume.pause_samples == pause.audio.shape[0]
    assert resume.resumed_at == pytest.approx(9 * 0.02)
    # Hinting the stale first pause complete must not shorten the second silence run.
    seg2 = Segmenter(ADAPTIVE, 16000)
    events2 = []
    for i, ch in enumerate("xxxxx" + "..." + "xxx" + "." * 20):
        event = seg2.process(np.full(FRAME, 0.5 if ch == "x" else 0.0, dtype=np.float32), ch == "x", (i + 1) * 0.02)
        if i == 8:
            seg2.hint(pause.audio.shape[0], True)
        if event is not None:
            events2.append((i, event))
    assert end_index(events2) == 11 + 14


def test_a_hint_from_another_thread_is_seen_by_the_next_frame():
    import threading

    seg = Segmenter(ADAPTIVE, 16000)
    events = run(seg, "xxxxx" + "..")
    (_, pause) = events[-1]
    assert isinstance(pause, SegmentPause)
    stt = threading.Thread(target=seg.hint, args=(pause.audio.shape[0], True), name="edgevox-voice-test-stt")
    stt.start()
    stt.join()
    silent = np.zeros(FRAME, dtype=np.float32)
    ends = [seg.process(silent, False, 1.0) for _ in range(3)]
    assert isinstance(ends[2], SegmentEnd) and ends[2].pause_samples == pause.audio.shape[0]


def test_end_wins_when_resumed_speech_reaches_the_maximum_length():
    settings = SegmenterSettings(
        frame_ms=20, pre_roll_ms=0, min_speech_ms=60, end_silence_ms=200, pause_ms=40, max_utterance_s=0.2
    )
    # 3 frames at the start, 2 more voiced, 4 silent (a pause on the 2nd): the voiced 10th frame is the limit.
    events = run(Segmenter(settings, 16000), "xxxxx" + "...." + "x")
    assert [type(e).__name__ for _, e in events] == ["SegmentStart", "SegmentPause", "SegmentEnd"]
    assert events[-1][1].truncated


def test_without_pauses_the_hold_is_off():
    settings = SegmenterSettings(
        frame_ms=20, pre_roll_ms=0, min_speech_ms=60, end_silence_ms=100, hold_silence_ms=300, pause_ms=0
    )
    events = run(Segmenter(settings, 16000), "xxxxx" + "." * 20)
    assert end_index(events) == 5 + 4


def test_max_length_cuts_and_speech_continues_in_a_new_utterance():
    seg = Segmenter(SegmenterSettings(frame_ms=20, min_speech_ms=40, end_silence_ms=100, max_utterance_s=0.4), 16000)
    events = run(seg, "x" * 30 + "." * 6)
    kinds = [(type(e).__name__, getattr(e, "truncated", None)) for _, e in events]
    assert kinds[0:2] == [("SegmentStart", None), ("SegmentEnd", True)]
    assert ("SegmentStart", None) in kinds[2:]
    assert all(e.audio.shape[0] <= 20 * FRAME for _, e in events if isinstance(e, SegmentEnd))


def test_flush_ends_an_utterance_in_progress():
    seg = Segmenter(SegmenterSettings(frame_ms=20, min_speech_ms=40), 16000)
    run(seg, "xxxxx")
    end = seg.flush()
    assert isinstance(end, SegmentEnd) and end.truncated
    assert seg.flush() is None


@pytest.mark.parametrize(
    "kwargs",
    [{"frame_ms": 25}, {"end_silence_ms": 5}, {"pre_roll_ms": -1}, {"hold_silence_ms": 100}, {"hold_silence_ms": -1}],
)
def test_invalid_settings_are_rejected(kwargs):
    with pytest.raises(ValueError):
        SegmenterSettings(**kwargs)


def test_frame_splitter_reblocks_and_backdates_frame_times():
    splitter = FrameSplitter(320, 16000)
    assert splitter.push(np.zeros(500, dtype=np.float32), 1.0) and True
    frames = splitter.push(np.zeros(460, dtype=np.float32), 2.0)
    # 500 + 460 = 960 samples = 3 frames; the first came out of the first push
    assert len(frames) == 2
    assert frames[-1][1] == pytest.approx(2.0)
    assert frames[0][1] == pytest.approx(2.0 - 320 / 16000)


def test_percentiles_and_latency_summary():
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == pytest.approx(2.5)
    from edgevox.voice.events import Chunk, FirstAudio, SpeechEnded, Token, TranscriptEvent, TurnDone

    obs = LatencyObserver()
    for turn, base in ((1, 100.0), (2, 200.0)):
        obs.on_event(SpeechEnded(turn_id=turn, last_voiced_at=base))
        obs.on_event(TranscriptEvent(turn_id=turn, timestamp=base + 0.3))
        obs.on_event(Token(turn_id=turn, timestamp=base + 0.35))
        obs.on_event(Token(turn_id=turn, timestamp=base + 0.9))
        obs.on_event(Chunk(turn_id=turn, timestamp=base + 0.4))
        obs.on_event(FirstAudio(turn_id=turn, timestamp=base + 0.5 + turn / 10))
        obs.on_event(TurnDone(turn_id=turn))
    summary = obs.summary()
    assert summary["speech_end->transcript"]["p50"] == pytest.approx(0.3)
    assert summary["transcript->first_token"]["p50"] == pytest.approx(0.05)
    assert summary["speech_end->first_audio"]["n"] == 2
    assert summary["speech_end->first_audio"]["p50"] == pytest.approx(0.65)


def test_vocabulary_reads_nested_enums_and_deduplicates():
    class Agent:
        tools = [
            {
                "name": "dock_robot",
                "parameters": {
                    "type": "object",
                    "properties": {"where": {"type": "array", "items": {"enum": ["base", "Kitchen"]}}},
                },
            }
        ]

    assert vocabulary_for(["kitchen", "EdgeVox"], Agent()) == ("kitchen", "EdgeVox", "dock robot", "base")


def test_playback_reference_level_and_forget():
    ref = PlaybackReference(16000, block_ms=10)
    ref.add(0, np.full(1600, 0.5, dtype=np.float32), 0)
    ref.add(1600, np.full(1600, 0.1, dtype=np.float32), 0)
    assert ref.level(800, 160) == pytest.approx(0.5)
    assert ref.level(2400, 160) == pytest.approx(0.1, rel=1e-3)
    assert ref.level(10000, 160) == 0.0
    ref.forget_after(1600)
    assert ref.level(2400, 160) == 0.0


def test_a_reply_written_far_ahead_of_playback_keeps_its_reference_until_it_has_played():
    """A 48 s story is synthesized and written within its first seconds of playback. The echo
    gate needs the level of what plays now; dropping spans 30 s older than the newest write (as
    it did) left nothing at the playing position, so the whole rest of the story passed the
    gate as a user's speech (CI: an 8 s "utterance" of the robot's own story)."""
    rate = 22050
    ref = PlaybackReference(rate, block_ms=10, keep_s=30.0)
    chunk = np.full(4 * rate, 0.1, dtype=np.float32)
    for i in range(12):  # written while the first 5 s play
        ref.add(i * chunk.shape[0], chunk, played_pos=int(i * 0.4 * rate))
    assert ref.level(4 * rate, rate // 10) == pytest.approx(0.1, rel=1e-3)
    assert ref.level(47 * rate, rate // 10) == pytest.approx(0.1, rel=1e-3)
    ref.add(12 * chunk.shape[0], chunk, played_pos=45 * rate)  # 45 s later: what played before 15 s goes
    assert ref.level(2 * rate, rate // 10) == 0.0
    assert ref.level(20 * rate, rate // 10) == pytest.approx(0.1, rel=1e-3)


def test_a_pause_hinted_a_complete_statement_waits_between_the_short_and_the_long_silence():
    settings = replace(ADAPTIVE, statement_silence_ms=200)
    seg = Segmenter(settings, 16000)
    out = []
    for i, ch in enumerate("xxxxx" + "." * 20):
        event = seg.process(np.full(FRAME, 0.5 if ch == "x" else 0.0, dtype=np.float32), ch == "x", (i + 1) * 0.02)
        if isinstance(event, SegmentPause):
            seg.hint(event.audio.shape[0], True, statement=True)
        if event is not None:
            out.append((i, event))
    assert end_index(out) == 5 + 9  # ten silent frames: 200 ms, not 100 (request) nor 300 (hold)
