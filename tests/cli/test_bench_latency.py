"""``edgevox bench latency``: turns counted against clips, the clip rule and the busy load on
synthetic input; a run of the whole bench on scripted engines (with ``--load``); and (marked
``models``) a short run of the default application with the real models."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import wave
from pathlib import Path

import numpy as np
import pytest

from edgevox.cli.bench_clips import pause_cases, select_rows, voiced_run
from edgevox.cli.bench_live import BusyLoad, count_turns, utterances
from edgevox.testing import FakeVAD
from edgevox.voice.events import SpeechEnded, SpeechStarted, TranscriptEvent

SPEECH_DIR = Path(__file__).resolve().parents[3] / "shared" / "speech"


def _said(turn_id: int, first: float, last: float | None) -> list[object]:
    events: list[object] = [SpeechStarted(turn_id=turn_id, first_voiced_at=first)]
    if last is not None:
        events += [SpeechEnded(turn_id=turn_id, last_voiced_at=last), TranscriptEvent(turn_id=turn_id, text="x")]
    return events


# --- turns against clips ------------------------------------------------------------------------


def test_one_utterance_per_clip_is_neither_split_nor_merged_nor_missed():
    windows = [(10.0, 11.0), (20.0, 22.0)]
    events = _said(1, 10.2, 10.9) + _said(2, 20.1, 21.8)
    count = count_turns(windows, utterances(events))
    assert count.per_clip == [[1], [2]]
    assert (count.split, count.merged, count.missed) == ([], [], [])


def test_a_clip_heard_as_two_utterances_is_split():
    windows = [(10.0, 12.0), (20.0, 21.0)]
    events = _said(1, 10.1, 10.8) + _said(2, 11.3, 11.9) + _said(3, 20.2, 20.9)
    count = count_turns(windows, utterances(events))
    assert count.split == [0]
    assert count.per_clip == [[1, 2], [3]]
    assert count.merged == [] and count.missed == []


def test_one_utterance_over_two_clips_is_merged_and_a_silent_clip_is_missed():
    windows = [(10.0, 11.0), (11.4, 12.0), (20.0, 21.0)]
    events = _said(1, 10.1, 11.9)
    count = count_turns(windows, utterances(events))
    assert count.merged == [1]
    assert count.per_clip == [[1], [1], []]
    assert count.missed == [2] and count.split == []


def test_an_utterance_still_open_counts_in_the_clip_it_started_in():
    count = count_turns([(10.0, 11.0), (20.0, 21.0)], utterances(_said(1, 10.5, None)))
    assert count.per_clip == [[1], []]


def test_voicing_just_outside_a_clip_window_still_belongs_to_it():
    # The VAD's frames and the mic's 20 ms blocks blur the edges by a few frames.
    count = count_turns([(10.0, 11.0)], utterances(_said(1, 9.9, 11.1)))
    assert count.per_clip == [[1]]


# --- the clip rule ------------------------------------------------------------------------------


def _row(file: str, category: str, transcript: str = "words", duration_s: float = 1.0) -> dict[str, str]:
    return {"file": file, "category": category, "transcript": transcript, "duration_s": str(duration_s)}


def test_clips_are_shared_out_in_turn_among_commands_digits_and_read_sentences():
    rows = [_row(f"commands/c{i}.wav", "command_sentence") for i in range(6)]
    rows += [_row(f"commands/felix_one_{i}.wav", "command_word", "one") for i in range(2)]
    rows += [_row(f"read/r{i}.wav", "read_speech", duration_s=5.0) for i in range(4)]
    picked = [r["file"] for r in select_rows(rows, 7)]
    # 3 commands (spread: rows 0, 2, 4), 2 digits, 2 read (rows 0, 2), interleaved.
    assert picked == [
        "commands/c0.wav",
        "commands/felix_one_0.wav",
        "read/r0.wav",
        "commands/c2.wav",
        "commands/felix_one_1.wav",
        "read/r2.wav",
        "commands/c4.wav",
    ]
    assert len(select_rows(rows, 0)) == 12


def test_stop_phrases_untranscribed_rows_and_read_speech_outside_3_to_10_s_are_not_clips():
    rows = [
        _row("commands/felix_stop_2.wav", "command_word", "stop"),
        _row("commands/silence.wav", "command_word", ""),
        _row("read/short.wav", "read_speech", duration_s=1.9),
        _row("read/long.wav", "read_speech", duration_s=11.7),
        _row("misc/noise.wav", "noise_only"),
        _row("read/ok.wav", "read_speech", duration_s=9.9),
    ]
    picked = select_rows(rows, 0, is_stop=lambda text: text == "stop")
    assert [r["file"] for r in picked] == ["read/ok.wav"]


def test_a_digit_word_is_cut_to_its_longest_voiced_run():
    vad = FakeVAD(frame_ms=20)
    frame = 320
    click, word = np.full(frame * 2, 0.5, np.float32), np.full(frame * 10, 0.5, np.float32)
    audio = np.concatenate([click, np.zeros(frame * 5, np.float32), word, np.zeros(frame * 3, np.float32)])
    assert voiced_run(audio, vad).shape[0] == word.shape[0]


def test_pause_cases_join_real_takes_with_the_gap_and_skip_takes_without_speech(tmp_path):
    rate = 16000
    loud = np.full(rate // 2, 0.5, np.float32)
    for name, audio in {
        "felix_one_0": np.zeros(rate // 2, np.float32),
        "felix_one_1": loud,
        "felix_two_0": loud,
    }.items():
        _write_wav(tmp_path / "commands" / f"{name}.wav", audio)
    rows = [_row(f"commands/{n}.wav", "command_word") for n in ("felix_one_0", "felix_one_1", "felix_two_0")]
    (case,) = pause_cases(rows, tmp_path, 1, FakeVAD(frame_ms=20))
    assert case.text == "one two" and case.group == "pause"
    voiced = np.abs(case.audio) > 0
    assert voiced.sum() == 2 * loud.shape[0]  # the silent take of "one" was skipped
    assert case.audio.shape[0] == 2 * loud.shape[0] + rate * 400 // 1000


# --- the busy load ------------------------------------------------------------------------------


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_busy_load_runs_its_processes_inside_the_block_and_reaps_them_after():
    with BusyLoad(2) as load:
        assert len(load.pids) == 2
        assert all(p.poll() is None for p in load.procs)
    assert all(p.returncode is not None for p in load.procs)
    assert all(_gone(pid) for pid in load.pids)


def test_busy_load_reaps_its_processes_when_the_block_raises():
    with pytest.raises(KeyboardInterrupt), BusyLoad(2) as load:
        raise KeyboardInterrupt
    assert all(_gone(pid) for pid in load.pids)


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="needs os.pidfd_open (Linux)")
def test_busy_processes_end_by_themselves_when_the_bench_is_killed():
    code = (
        "import os, signal, sys\n"
        "from edgevox.cli.bench_live import BusyLoad\n"
        "load = BusyLoad(2).__enter__()\n"
        "print(*load.pids, flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60).stdout
    pids = [int(p) for p in out.split()]
    assert len(pids) == 2, out
    for pid in pids:
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue  # already gone
        try:
            readable, _, _ = select.select([fd], [], [], 20.0)  # readable once the process has exited
            assert readable, f"busy process {pid} outlived the killed bench"
        finally:
            os.close(fd)


def test_bad_option_values_are_one_usage_line(capsys):
    from edgevox.cli.main import main

    for argv, words in (
        (["--load", "-1"], "argument --load: '-1': expected a whole number from 0 to 1024"),
        (["--clips", "many"], "argument --clips: 'many' is not a whole number"),
        (["--pauses", "4"], "argument --pauses: '4': expected a whole number from 0 to 3"),
    ):
        with pytest.raises(SystemExit) as exc:
            main(["bench", "latency", *argv])
        assert exc.value.code == 2
        assert words in capsys.readouterr().err


# --- whole runs ---------------------------------------------------------------------------------

SCRIPTED = """\
name: scripted-bench
stt:
  engine: edgevox.testing:FakeSTT
  options: {default: "go forward"}
vad:
  engine: edgevox.testing:FakeVAD
  options: {frame_ms: 20}
llm:
  engine: edgevox.testing:ScriptedLLM
  options: {default: "Going forward."}
tts:
  engine: edgevox.testing:FakeTTS
  options: {sample_rate_hz: 16000}
agents:
  assistant:
    instructions: Be brief.
"""


def _write_wav(path: Path, audio: np.ndarray, rate: int = 16000) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes((np.clip(audio, -1, 1) * 32767).astype("<i2").tobytes())


def _tone_manifest(folder: Path) -> Path:
    """A command, two digit words and a read sentence: tones between silences."""
    rate = 16000
    pad = np.zeros(rate // 5, np.float32)
    rows = ["file\tduration_s\ttranscript\tcategory"]
    for name, seconds, text, category in (
        ("commands/go.wav", 0.6, "go forward", "command_sentence"),
        ("commands/felix_one_0.wav", 0.4, "one", "command_word"),
        ("commands/felix_two_0.wav", 0.4, "two", "command_word"),
        ("read/sentence.wav", 1.0, "a read sentence", "read_speech"),
    ):
        tone = (0.3 * np.sin(2 * np.pi * 220 * np.arange(int(rate * seconds)) / rate)).astype(np.float32)
        _write_wav(folder / name, np.concatenate([pad, tone, pad]))
        listed = 3.5 if category == "read_speech" else seconds  # the rule reads duration_s
        rows.append(f"{name}\t{listed}\t{text}\t{category}")
    path = folder / "MANIFEST.tsv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


@pytest.mark.slow
def test_a_scripted_run_under_load_counts_turns_splits_the_pause_case_and_leaves_no_busy_process(tmp_path, capsys):
    from edgevox.cli.main import main

    config = tmp_path / "scripted.yaml"
    config.write_text(SCRIPTED, encoding="utf-8")
    manifest = _tone_manifest(tmp_path)
    argv = ["bench", "latency", str(manifest), "--config", str(config), "--clips", "3", "--pauses", "1"]
    code = main([*argv, "--barge-ins", "0", "--stops", "0", "--load", "2", "--json"])
    out = capsys.readouterr().out
    result = json.loads(out)
    assert code == 0 and result["clean_stop"], out
    (run,) = result["passes"]
    assert run["condition"] == "loaded" and run["busy_processes"] == 2
    assert len(run["busy_pids"]) == 2 and all(_gone(pid) for pid in run["busy_pids"])
    assert run["clips"] == 3 and run["pause_cases"] == 1
    assert run["split"] == [] and run["merged"] == 0 and run["missed"] == []
    # "one", 400 ms of silence, "two": the 300 ms endpoint cuts it in two.
    assert run["pause_split"] == ["one + two (400 ms pauses)"]
    # Its "two" came while the reply to "one" played: the half-duplex guard dropped it (no turn).
    assert run["utterances"] == 5 and run["turns"] + run["echo_ignored"] == 5, out
    assert run["summary"]["speech_end->first_audio"]["n"] == run["turns"]
    assert run["summary"]["naive_baseline"]["n"] == 4


@pytest.mark.models
@pytest.mark.slow
def test_a_short_run_of_the_default_app_reports_sane_figures_and_stops_cleanly(tmp_path, capsys):
    from edgevox.cli.main import main

    shared = SPEECH_DIR / "MANIFEST.tsv"
    if not shared.is_file():
        pytest.skip(f"shared speech folder {SPEECH_DIR} is absent (CI provides ../shared/speech)")
    keep = (
        "classic/goforward.wav",
        "commands/felix_one_0.wav",
        "librispeech/sense_and_sensibility_01_austen_64kb-0930.wav",
        "commands/felix_stop_2.wav",  # the stop trial's recorded "stop" (never one of the clips)
    )
    lines = shared.read_text(encoding="utf-8").splitlines()
    rows = [lines[0]] + [f"{SPEECH_DIR}/{line}" for line in lines[1:] if line.split("\t")[0] in keep]
    manifest = tmp_path / "MANIFEST.tsv"
    manifest.write_text("\n".join(rows) + "\n", encoding="utf-8")

    code = main(["bench", "latency", str(manifest), "--pauses", "0", "--barge-ins", "0", "--stops", "1", "--json"])
    out = capsys.readouterr().out
    result = json.loads(out)
    assert code == 0 and result["clean_stop"], out
    (run,) = result["passes"]
    assert run["condition"] == "idle" and run["clips"] == 3
    assert run["split"] == [] and run["merged"] == 0 and run["missed"] == [], out
    assert run["turns"] == 3
    for stage, stats in run["summary"].items():
        assert stats["n"] == 3, (stage, out)
        assert 0 < stats["p50"] <= stats["p95"] <= stats["max"] < 30, (stage, out)
    assert run["ratio_naive_over_loop_p50"] > 1, out
    assert result["stop_trials"] == ["stopped"], out
    assert result["stop_cancel"]["n"] == 1
    assert result["peak_rss_mb"] > 0
