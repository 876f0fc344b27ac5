"""``edgevox bench soak``: the ledger's definitions on scripted events, and (marked ``models``,
``audio``) the short CI soak of the home robot with the real models through a private PulseAudio."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from edgevox.cli.bench_soak_driver import SCRIPT
from edgevox.cli.bench_soak_ledger import TurnLedger
from edgevox.runtime.events import ErrorEvent
from edgevox.voice.events import FirstAudio, SpeechEnded, TranscriptEvent, TurnDone, TurnStarted

SPEECH_DIR = Path(__file__).resolve().parents[3] / "shared" / "speech"


def test_a_turn_without_turn_done_after_the_timeout_is_lost_and_a_finished_one_is_not():
    ledger = TurnLedger(turn_timeout_s=0.0)
    ledger.on_event(TranscriptEvent(turn_id=1, text="go to the kitchen", origin="text", timestamp=100.0))
    ledger.on_event(TranscriptEvent(turn_id=2, text="what is the battery level", origin="text", timestamp=101.0))
    ledger.on_event(TurnDone(turn_id=1, status="stopped"))
    assert ledger.sweep() == 1
    assert list(ledger.lost) == [2]
    assert ledger.counts.submitted == 2 and ledger.counts.finished == 1


def test_echo_stop_phrases_and_empty_transcripts_are_not_submitted_turns():
    ledger = TurnLedger(turn_timeout_s=0.0)
    ledger.on_event(SpeechEnded(turn_id=1, ignored=True, last_voiced_at=10.0))
    ledger.on_event(TranscriptEvent(turn_id=1, text="Moved forward 10 meters.", origin="voice"))
    ledger.on_event(TranscriptEvent(turn_id=2, text="stop", stop_phrase="stop", origin="voice"))
    ledger.on_event(TranscriptEvent(turn_id=3, text="", origin="voice"))
    assert ledger.counts.submitted == 0
    assert ledger.counts.echo_ignored == 1 and ledger.counts.empty == 1
    assert ledger.sweep() == 0


def test_latency_runs_from_the_last_voiced_frame_and_announcements_count_as_turns_without_it():
    ledger = TurnLedger(turn_timeout_s=60.0)
    ledger.on_event(SpeechEnded(turn_id=1, last_voiced_at=100.0))
    ledger.on_event(TranscriptEvent(turn_id=1, text="what time is it", origin="voice", timestamp=100.4))
    ledger.on_event(FirstAudio(turn_id=1, timestamp=100.9))
    ledger.on_event(TurnStarted(turn_id=2, text="Stopped.", timestamp=101.0))  # a say turn
    ledger.on_event(FirstAudio(turn_id=2, timestamp=101.2))
    assert ledger.take_latencies() == [pytest.approx(0.9)]
    assert ledger.counts.submitted == 2


def test_error_events_and_failed_turns_are_counted():
    ledger = TurnLedger(turn_timeout_s=60.0)
    ledger.on_event(ErrorEvent(where="voice.stt", error="RuntimeError('boom')"))
    ledger.on_event(TranscriptEvent(turn_id=1, text="hello", origin="text"))
    ledger.on_event(TurnDone(turn_id=1, status="error", error="AgentError('refused')"))
    assert len(ledger.errors) == 2


def test_the_script_exercises_speech_text_skills_stops_barge_in_and_interrupts():
    actions = {action for _what, action, _arg in SCRIPT}
    assert {"speak", "type", "stop_mid_skill", "talk_over", "interrupt", "say"} <= actions


@pytest.mark.models
@pytest.mark.audio
@pytest.mark.slow
def test_short_soak_loses_no_turn_reports_no_error_and_leaves_no_thread(capsys):
    from edgevox.cli.main import main
    from edgevox.testing.pulse import pulseaudio_installed

    if not pulseaudio_installed():
        pytest.skip("the pulseaudio binary is absent (apt-get install pulseaudio pulseaudio-utils libportaudio2)")
    if not SPEECH_DIR.is_dir():
        pytest.skip(f"shared speech folder {SPEECH_DIR} is absent (CI provides ../shared/speech)")
    argv = ["bench", "soak", "--minutes", "2.5", "--interval-minutes", "1", "--speech-dir", str(SPEECH_DIR)]
    # RSS still settles in the first minutes (model buffers); the 60-minute run checks < 5 %.
    code = main([*argv, "--max-rss-growth-pct", "25"])
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert len(lines) >= 8, out
    for line in lines:
        assert re.search(r"\d", line), f"a line without figures: {line!r}\n{out}"
    summary = next(line for line in lines if line.startswith("summary:"))
    assert re.search(r", 0 lost \(", summary), out
    assert "; 0 error events" in summary, out
    assert re.search(r"^after stop: 0 edgevox threads left", out, re.M), out
    assert re.search(r"^stop mid-drive: halted [1-9]\d*, kept driving 0", out, re.M), out
    assert len([line for line in lines if re.match(r"\s*\d+\.\d min  RSS", line)]) >= 2, out
    assert code == 0, out
