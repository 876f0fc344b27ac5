"""``edgevox eval ...``: offline evaluations that print figures.

``edgevox eval stt MANIFEST.tsv`` transcribes every clip of a manifest with the real
STT engine, twice (without and with vocabulary biasing), and prints word error rate
per category after :func:`edgevox.voice.textnorm.normalize`, with the compute time per
clip (p50/p95) of each pass and the encoder window policy used (``--min-window-s 30``
measures faster-whisper's full 30 s path for comparison).

The vocabulary comes from ``--vocab-file`` / ``--vocab``, else the generic robot
command list shipped in ``edgevox/data/vocabulary.txt``. It is never derived from the
manifest: that would tune the biasing to the very clips being scored.

Adding an evaluation: write ``register_<what>(eval_sub)`` that adds a parser to the
``eval`` sub-subparsers and sets ``func``, and list it in ``_EVALUATIONS`` (or let
another module call :func:`register_evaluation`).
"""

from __future__ import annotations

import argparse
import csv
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from edgevox.cli.args import number, whole
from edgevox.errors import ConfigError

if TYPE_CHECKING:
    from edgevox.engines.base import STT

# --- evaluation registry ----------------------------------------------------------------------

_EVALUATIONS: list[Callable[[Any], None]] = []


def register_evaluation(register_fn: Callable[[Any], None]) -> Callable[[Any], None]:
    """Add ``register_fn(eval_subparsers)`` to ``edgevox eval`` (usable as a decorator)."""
    if register_fn not in _EVALUATIONS:
        _EVALUATIONS.append(register_fn)
    return register_fn


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("eval", help="offline evaluations (STT word error rate, tool calling)")
    eval_sub = parser.add_subparsers(dest="eval_command", metavar="WHAT")
    for register_fn in _EVALUATIONS:
        register_fn(eval_sub)

    def _help(_args: argparse.Namespace) -> int:
        parser.print_help()
        return 2

    parser.set_defaults(func=_help)


# --- manifest and vocabulary ------------------------------------------------------------------


@dataclass(frozen=True)
class Clip:
    path: Path
    transcript: str
    category: str


def load_manifest(path: str | Path, categories: Sequence[str] = ()) -> list[Clip]:
    """Rows of a tab-separated manifest with columns ``file``, ``transcript``, ``category``.

    ``file`` is relative to the manifest's folder. Missing columns or files are errors.
    """
    manifest = Path(path)
    if not manifest.is_file():
        raise ConfigError(f"{manifest}: manifest not found")
    with open(manifest, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
        missing = {"file", "transcript", "category"} - set(reader.fieldnames or ())
        if missing:
            raise ConfigError(f"{manifest}: missing column(s) {sorted(missing)}; found {reader.fieldnames}")
        clips = []
        for line, row in enumerate(reader, start=2):
            category = (row["category"] or "").strip()
            if categories and category not in categories:
                continue
            clip_path = manifest.parent / (row["file"] or "").strip()
            if not clip_path.is_file():
                raise ConfigError(f"{manifest}:{line}: file {row['file']!r} does not exist ({clip_path})")
            clips.append(Clip(path=clip_path, transcript=(row["transcript"] or "").strip(), category=category))
    if categories and not clips:
        raise ConfigError(f"{manifest}: no clips in categories {list(categories)}")
    return clips


def default_vocabulary_text() -> str:
    return resources.files("edgevox").joinpath("data/vocabulary.txt").read_text(encoding="utf-8")


def parse_vocabulary(text: str) -> list[str]:
    """One word or phrase per line (commas also separate); ``#`` starts a comment."""
    words: list[str] = []
    for line in text.splitlines():
        line = line.split("#", 1)[0]
        words.extend(w.strip() for w in line.split(",") if w.strip())
    return words


# --- the STT evaluation -----------------------------------------------------------------------


@dataclass
class CategoryScore:
    clips: int = 0
    reference_words: int = 0
    errors: int = 0
    hallucinated_clips: int = 0
    """Clips with an empty reference (no speech / out of vocabulary) that got a transcript."""

    @property
    def wer(self) -> float | None:
        return self.errors / self.reference_words if self.reference_words else None


@dataclass
class SttEvalResult:
    rows: list[dict[str, Any]] = field(default_factory=list)
    plain: dict[str, CategoryScore] = field(default_factory=dict)
    biased: dict[str, CategoryScore] = field(default_factory=dict)
    seconds_per_clip: float = 0.0
    compute_s: dict[str, list[float]] = field(default_factory=dict)
    """Seconds of transcription per clip, per pass (``plain``, ``biased``)."""

    def compute_percentile_s(self, label: str, q: float) -> float:
        """The ``q`` quantile (0..1) of the per-clip compute time of pass ``label``."""
        from edgevox.voice.latency import percentile

        times = self.compute_s.get(label)
        return percentile(times, 100 * q) if times else 0.0


def evaluate_stt(clips: Sequence[Clip], stt: STT, vocabulary: Sequence[str]) -> SttEvalResult:
    """Transcribe each clip without and with ``vocabulary``; score per category (and ``ALL``)."""
    from edgevox.engines.audio_wav import read_wav
    from edgevox.engines.resample import resample
    from edgevox.voice.textnorm import word_errors

    result = SttEvalResult()
    elapsed = 0.0
    for clip in clips:
        audio, rate = read_wav(clip.path)
        audio = resample(audio, rate, stt.sample_rate_hz)
        row: dict[str, Any] = {"file": str(clip.path), "category": clip.category, "reference": clip.transcript}
        for label, vocab, table in (("plain", (), result.plain), ("biased", vocabulary, result.biased)):
            start = time.perf_counter()
            hyp = stt.transcribe(audio, vocabulary=vocab).text
            took = time.perf_counter() - start
            elapsed += took
            result.compute_s.setdefault(label, []).append(took)
            errs = word_errors(clip.transcript, hyp)
            row[label] = hyp
            row[f"{label}_errors"] = errs.errors
            for key in (clip.category, "ALL"):
                score = table.setdefault(key, CategoryScore())
                score.clips += 1
                if errs.reference_words:
                    score.reference_words += errs.reference_words
                    score.errors += errs.errors
                elif errs.insertions:
                    # No reference words: WER is undefined; count the clip as hallucinated
                    # instead of letting its words inflate the overall WER.
                    score.hallucinated_clips += 1
        result.rows.append(row)
    result.seconds_per_clip = elapsed / (2 * len(clips)) if clips else 0.0
    return result


def register_stt(eval_sub: Any) -> None:
    p = eval_sub.add_parser("stt", help="word error rate per category, with and without vocabulary biasing")
    p.add_argument("manifest", help="tab-separated manifest with columns file, transcript, category")
    p.add_argument("--category", action="append", default=[], help="only this category (repeatable)")
    p.add_argument(
        "--vocab-file", help="vocabulary file (one word/phrase per line); default: edgevox/data/vocabulary.txt"
    )
    p.add_argument("--vocab", help="comma-separated vocabulary (added to --vocab-file's)")
    p.add_argument("--model", default="whisper-tiny.en", help="STT model reference (default: whisper-tiny.en)")
    p.add_argument("--bias", choices=("prompt", "hotwords"), default="prompt", help="how the vocabulary biases Whisper")
    p.add_argument("--beam-size", type=whole(low=1, high=32), default=1)
    p.add_argument("--threads", type=whole(low=1, high=256), default=2, help="CPU threads for the STT engine")
    p.add_argument(
        "--min-window-s",
        type=number(low=0, high=30, inclusive_low=True),
        default=10.0,
        help="shortest encoder window in seconds (default 10; 30 = faster-whisper's full 30 s path)",
    )
    p.add_argument(
        "--window-pad-s",
        type=number(low=0, high=29, inclusive_low=True),
        default=3.0,
        help="seconds of padding after the audio in the encoder window (default 3)",
    )
    p.add_argument("--show", action="store_true", help="print every clip's transcripts")
    p.add_argument("--json", action="store_true", help="print the results as JSON instead of a table")
    p.set_defaults(func=_run_stt)


register_evaluation(register_stt)


def _register_tools(eval_sub: Any) -> None:
    """``eval tools`` lives in :mod:`edgevox.cli.eval_tools` (tool-calling accuracy)."""
    from edgevox.cli.eval_tools import add_tools_parser

    add_tools_parser(eval_sub)


register_evaluation(_register_tools)


def _run_stt(args: argparse.Namespace) -> int:
    from edgevox.engines.stt_faster_whisper import FasterWhisperSTT

    clips = load_manifest(args.manifest, args.category)
    if args.vocab_file:
        vocab_path = Path(args.vocab_file)
        if not vocab_path.is_file():
            raise ConfigError(f"--vocab-file {vocab_path}: file not found")
        vocabulary = parse_vocabulary(vocab_path.read_text(encoding="utf-8"))
    else:
        vocabulary = parse_vocabulary(default_vocabulary_text())
    if args.vocab:
        vocabulary += parse_vocabulary(args.vocab)
    stt = FasterWhisperSTT(
        args.model,
        cpu_threads=args.threads,
        beam_size=args.beam_size,
        bias=args.bias,
        min_window_s=args.min_window_s,
        window_pad_s=args.window_pad_s,
    )
    args.window_policy = f"{stt.window_policy} ({stt.device}, {stt.compute_type})"
    result = evaluate_stt(clips, stt, vocabulary)
    if args.json:
        print(json.dumps(_as_json(result, args, len(vocabulary)), indent=2))
        return 0
    _print_table(result, args, len(vocabulary))
    return 0


def _fmt_wer(score: CategoryScore | None) -> str:
    if score is None or score.wer is None:
        return "-"
    return f"{100 * score.wer:.1f}%"


def _print_table(result: SttEvalResult, args: argparse.Namespace, vocab_size: int) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    if args.show:
        for row in result.rows:
            console.print(f"[bold]{row['file']}[/] ({row['category']})")
            console.print(f"  ref:    {row['reference']}")
            console.print(f"  plain:  {row['plain']}  [{row['plain_errors']} err]")
            console.print(f"  biased: {row['biased']}  [{row['biased_errors']} err]")
    table = Table(title=f"STT word error rate: {args.model}, bias={args.bias}, {vocab_size} vocabulary entries")
    table.add_column("category", no_wrap=True)
    for col in ("clips", "ref words", "WER plain", "WER biased", "hallucinated (plain/biased)"):
        table.add_column(col, justify="right")
    for category in sorted(result.plain, key=lambda c: (c == "ALL", c)):
        plain, biased = result.plain[category], result.biased[category]
        table.add_row(
            category,
            str(plain.clips),
            str(plain.reference_words),
            _fmt_wer(plain),
            _fmt_wer(biased),
            f"{plain.hallucinated_clips}/{biased.hallucinated_clips}",
        )
    console.print(table)
    console.print(f"STT window: {args.window_policy}")
    for label in ("plain", "biased"):
        console.print(
            f"compute per clip ({label}): p50 {1000 * result.compute_percentile_s(label, 0.5):.0f} ms, "
            f"p95 {1000 * result.compute_percentile_s(label, 0.95):.0f} ms"
        )
    console.print(f"mean transcription time: {1000 * result.seconds_per_clip:.0f} ms per clip")


def _as_json(result: SttEvalResult, args: argparse.Namespace, vocab_size: int) -> dict[str, Any]:
    def scores(table: dict[str, CategoryScore]) -> dict[str, Any]:
        return {
            k: {
                "clips": v.clips,
                "reference_words": v.reference_words,
                "errors": v.errors,
                "wer": v.wer,
                "hallucinated_clips": v.hallucinated_clips,
            }
            for k, v in table.items()
        }

    return {
        "model": args.model,
        "bias": args.bias,
        "vocabulary_size": vocab_size,
        "plain": scores(result.plain),
        "biased": scores(result.biased),
        "window": args.window_policy,
        "seconds_per_clip": result.seconds_per_clip,
        "compute_s": {
            label: {"p50": result.compute_percentile_s(label, 0.5), "p95": result.compute_percentile_s(label, 0.95)}
            for label in result.compute_s
        },
        "rows": result.rows,
    }


import edgevox.cli.eval_endpoint  # noqa: E402, F401  (registers `eval endpoint`)
import edgevox.cli.eval_wake  # noqa: E402, F401  (registers `eval wake`)
