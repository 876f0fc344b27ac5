"""WER normalisation (edgevox.voice.textnorm) and ``edgevox eval stt``."""

from __future__ import annotations

import argparse

import numpy as np
import pytest

from edgevox.cli import eval_cmd
from edgevox.engines.audio_wav import write_wav
from edgevox.engines.base import Transcript
from edgevox.errors import ConfigError
from edgevox.voice.textnorm import normalize, word_errors


@pytest.mark.parametrize(
    ("n", "words"),
    [
        (0, "zero"),
        (10, "ten"),
        (13, "thirteen"),
        (30, "thirty"),
        (42, "forty two"),
        (105, "one hundred five"),
        (2024, "two thousand twenty four"),
        (1_000_000, "one million"),
    ],
)
def test_numbers_become_words_without_and_or_hyphens(n, words):
    assert normalize(str(n)) == words


def test_ordinals():
    assert [
        normalize(f"{n}{s}")
        for n, s in ((1, "st"), (2, "nd"), (3, "rd"), (5, "th"), (12, "th"), (20, "th"), (21, "st"), (100, "th"))
    ] == [
        "first",
        "second",
        "third",
        "fifth",
        "twelfth",
        "twentieth",
        "twenty first",
        "one hundredth",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Go forward 10 meters.", "go forward ten meters"),
        ("Turn 30 degrees, then 2.5 m!", "turn thirty degrees then two point five m"),
        ("The 3rd door; 50% done", "the third door fifty percent done"),
        ("I don't know 1,234 of them", "i don't know one thousand two hundred thirty four of them"),
        ("twenty-five 'quoted'", "twenty five quoted"),
        ("  HE COULD   WAIT  ", "he could wait"),
    ],
)
def test_normalize(text, expected):
    assert normalize(text) == expected


def test_word_errors_counts_each_kind():
    e = word_errors("go forward ten meters", "Go forward 10 meters.")
    assert e.errors == 0 and e.wer == 0.0
    e = word_errors("a b c", "a x c d")
    assert (e.substitutions, e.deletions, e.insertions, e.reference_words) == (1, 0, 1, 3)
    e = word_errors("turn left now", "turn")
    assert e.deletions == 2 and e.wer == pytest.approx(2 / 3)
    assert word_errors("", "hello").wer == float("inf")
    assert word_errors("", "").wer == 0.0
    e = word_errors("stop now please", "")
    assert (e.deletions, e.wer) == (3, 1.0)
    # Where several alignments cost the same, how the errors split into kinds is the aligner's choice
    # (jiwer: three substitutions here; one of each is as short); the total is the edit distance.
    e = word_errors("go to the kitchen and stop", "go the kitten and and stop")
    assert e.errors == 3 and e.wer == 0.5


def _manifest(tmp_path, rows):
    lines = ["file\tduration_s\ttranscript\tcategory"]
    for name, transcript, category, seconds in rows:
        write_wav(tmp_path / name, np.zeros(int(seconds * 16000), np.float32), 16000)
        lines.append(f"{name}\t{seconds}\t{transcript}\t{category}")
    (tmp_path / "MANIFEST.tsv").write_text("\n".join(lines) + "\n")
    return tmp_path / "MANIFEST.tsv"


def test_evaluate_stt_scores_per_category_with_and_without_vocabulary(tmp_path):
    manifest = _manifest(
        tmp_path,
        [
            ("a.wav", "go forward 10 meters", "command", 1.0),
            ("b.wav", "stop", "word", 0.5),
            ("c.wav", "", "noise", 0.25),
        ],
    )
    clips = eval_cmd.load_manifest(manifest)
    # Answers keyed by (clip length, whether a vocabulary was given): 16000 = a.wav, 8000 = b.wav, 4000 = c.wav.
    answers = {
        (16000, False): "go forward ten meters",
        (16000, True): "go forward ten meters",
        (8000, False): "top",
        (8000, True): "stop",
        (4000, False): "",
        (4000, True): "thank you",
    }

    class KeyedSTT:
        sample_rate_hz = 16000

        def transcribe(self, audio, *, vocabulary=()):
            return Transcript(text=answers[(audio.shape[0], bool(vocabulary))])

    stt = KeyedSTT()
    result = eval_cmd.evaluate_stt(clips, stt, ["stop"])
    assert result.plain["command"].wer == 0.0
    assert result.plain["word"].wer == 1.0 and result.biased["word"].wer == 0.0
    assert result.plain["noise"].wer is None and result.biased["noise"].hallucinated_clips == 1
    # Empty-reference clips do not inflate the overall WER.
    assert result.plain["ALL"].reference_words == 5 and result.plain["ALL"].errors == 1
    assert [c.category for c in eval_cmd.load_manifest(manifest, ["word"])] == ["word"]


def test_manifest_errors_name_the_problem(tmp_path):
    (tmp_path / "m.tsv").write_text("file\ttranscript\tcategory\nmissing.wav\thi\tx\n")
    with pytest.raises(ConfigError, match=r"m.tsv:2: file 'missing.wav' does not exist"):
        eval_cmd.load_manifest(tmp_path / "m.tsv")
    (tmp_path / "n.tsv").write_text("path\ttext\n")
    with pytest.raises(ConfigError, match="missing column"):
        eval_cmd.load_manifest(tmp_path / "n.tsv")


def test_default_vocabulary_is_shipped_and_parsed():
    words = eval_cmd.parse_vocabulary(eval_cmd.default_vocabulary_text())
    assert "stop" in words and "forward" in words and "follow me" in words
    assert not any(w.startswith("#") for w in words)
    assert eval_cmd.parse_vocabulary("a, b # comment\n\nc d\n") == ["a", "b", "c d"]


def test_eval_group_has_room_for_more_evaluations():
    seen = []
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()

    def register_dummy(eval_sub):
        p = eval_sub.add_parser("dummy")
        p.set_defaults(func=lambda args: seen.append("dummy") or 0)

    eval_cmd.register_evaluation(register_dummy)
    try:
        eval_cmd.register(sub)
        args = parser.parse_args(["eval", "dummy"])
        assert args.func(args) == 0 and seen == ["dummy"]
        assert parser.parse_args(["eval", "tools", "cases.jsonl", "evals/tools/drone"]).sets == [
            "cases.jsonl",
            "evals/tools/drone",
        ]
        assert parser.parse_args(["eval", "stt", "m.tsv", "--category", "x"]).category == ["x"]
    finally:
        eval_cmd._EVALUATIONS.remove(register_dummy)


@pytest.mark.models
def test_eval_stt_cli_runs_on_real_speech(speech_dir, capsys):
    from edgevox.cli.main import main

    rc = main(["eval", "stt", str(speech_dir / "MANIFEST.tsv"), "--category", "command", "--json"])
    assert rc == 0
    import json

    report = json.loads(capsys.readouterr().out)
    assert report["plain"]["command"]["clips"] >= 1
    assert report["plain"]["command"]["wer"] < 0.5
