"""``edgevox eval wake``: false wakes per hour of every embedded model on non-wake speech."""

from __future__ import annotations

import json
import shutil

import pytest

from edgevox.cli.main import main
from edgevox.engines.audio_wav import write_wav
from edgevox.engines.wake_micro import EMBEDDED_WAKE_MODELS

from .wake_audio import joined, silence, speak

pytestmark = pytest.mark.models

HEADER = "file\tduration_s\ttranscript\tcategory\n"


def manifest(tmp_path, rows: list[tuple[str, str]]):
    path = tmp_path / "MANIFEST.tsv"
    path.write_text(HEADER + "".join(f"{f}\t1.0\t{t}\tcommand\n" for f, t in rows), encoding="utf-8")
    return path


def test_eval_wake_counts_no_false_wake_on_human_commands_and_names_each_model(speech_dir, tmp_path, capsys):
    clips = ["classic/goforward.wav", "commands/stp_cancel_timer.wav", "commands/voice2json_what_time_is_it.wav"]
    for clip in clips:
        (tmp_path / clip).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(speech_dir / clip, tmp_path / clip)
    path = manifest(tmp_path, [(c, "a command") for c in clips])
    assert main(["eval", "wake", str(path), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["model"] for r in rows] == list(EMBEDDED_WAKE_MODELS)
    for row in rows:
        assert row["false_wakes"] == [] and row["false_wakes_per_hour"] == 0
        assert row["audio_s"] > 5 and 0 <= row["max_probability"] < row["threshold"]


def test_eval_wake_counts_a_wake_word_it_was_not_told_about(piper_tts_16k, tmp_path, capsys):
    # A clip whose transcript hides the wake word: the evaluation counts (and names) it.
    write_wav(tmp_path / "hidden.wav", joined(silence(0.5), piper_tts_16k("Alexa."), silence(0.5)), 16000)
    path = manifest(tmp_path, [("hidden.wav", "a word")])
    assert main(["eval", "wake", str(path), "--models", "alexa", "--show"]) == 0
    out = capsys.readouterr().out
    assert "1 clips" in out and "hidden.wav@" in out
    line = next(x for x in out.splitlines() if x.startswith("alexa "))
    assert line.split()[3] == "1", line


def test_eval_wake_refuses_a_manifest_that_says_a_wake_phrase(tmp_path, capsys):
    write_wav(tmp_path / "a.wav", silence(1.0), 16000)
    path = manifest(tmp_path, [("a.wav", "Okay Nabu, lights on")])
    assert main(["eval", "wake", str(path)]) == 2
    assert "says 'okay nabu'; a wake word is not a false wake" in capsys.readouterr().err


@pytest.fixture(scope="module")
def piper_tts_16k(real_engines):
    return lambda text: speak(real_engines.tts, text)
