"""``edgevox eval wake [MANIFEST]``: false wakes per hour on speech that has no wake word.

Every clip of the manifest (default ``../shared/speech/MANIFEST.tsv``: read speech, commands,
far-field and noisy mixes; none says a wake word) is resampled to 16 kHz and played back to
back, in 20 ms frames as the capture thread would, through each embedded microWakeWord model
at its threshold (the model's own ``probability_cutoff``, or ``wake.threshold`` /
``wake.sliding_window`` of ``--config``), offline and faster than real time. A detection is
counted once (the detector is reset after it, as the loop resets it when the window closes)
and named with its clip; the table gives false wakes per hour of audio, the hours played,
the highest smoothed probability seen (how close the speech came to waking it), and the
detector's real-time factor.

A manifest whose transcript names a wake phrase is refused: its detections would not be false.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from edgevox.cli.eval_cmd import Clip, load_manifest, register_evaluation
from edgevox.errors import ConfigError

DEFAULT_MANIFEST = Path("..") / "shared" / "speech" / "MANIFEST.tsv"
FRAME_S = 0.02
RATE_HZ = 16000


@dataclass
class WakeScore:
    """One model's result over the whole manifest."""

    model: str
    threshold: float
    sliding_window: int
    audio_s: float = 0.0
    compute_s: float = 0.0
    max_probability: float = 0.0
    false_wakes: list[str] = field(default_factory=list)
    """``clip@seconds`` of every detection."""

    @property
    def per_hour(self) -> float:
        return len(self.false_wakes) * 3600.0 / self.audio_s if self.audio_s else 0.0


def load_audio(clips: list[Clip]) -> list[tuple[str, np.ndarray]]:
    """Each clip as float32 mono at 16 kHz."""
    from edgevox.engines.audio_wav import read_wav
    from edgevox.engines.resample import resample

    out = []
    for clip in clips:
        audio, rate = read_wav(clip.path)
        out.append((clip.path.name, resample(audio, rate, RATE_HZ) if rate != RATE_HZ else audio))
    return out


def evaluate_model(
    model: str, audio: list[tuple[str, np.ndarray]], *, threshold: float | None, sliding_window: int | None
) -> WakeScore:
    """Play every clip back to back through ``model``; count and name the detections."""
    from edgevox.engines.wake_micro import MicroWakeWordDetector

    detector = MicroWakeWordDetector(model, threshold=0.0, sliding_window=sliding_window)
    cutoff = threshold if threshold is not None else MicroWakeWordDetector(model).threshold
    score = WakeScore(model, cutoff, detector.sliding_window)
    frame = int(RATE_HZ * FRAME_S)
    t0 = time.perf_counter()
    for name, clip in audio:
        for i in range(0, clip.shape[0] - frame + 1, frame):
            probability = detector.process(clip[i : i + frame])  # threshold 0: every smoothed output
            if probability is None:
                continue
            score.max_probability = max(score.max_probability, probability)
            if probability > cutoff:
                score.false_wakes.append(f"{name}@{i / RATE_HZ:.1f}s")
                detector.reset()
        score.audio_s += clip.shape[0] / RATE_HZ
    score.compute_s = time.perf_counter() - t0
    return score


def register_wake(eval_sub: Any) -> None:
    p = eval_sub.add_parser("wake", help="false wakes per hour of each embedded wake word model on non-wake speech")
    p.add_argument("manifest", nargs="?", default=str(DEFAULT_MANIFEST), help=f"default {DEFAULT_MANIFEST}")
    p.add_argument("--config", help="take wake.threshold and wake.sliding_window from this config")
    p.add_argument("--models", nargs="+", help="models to evaluate (default: every embedded one)")
    p.add_argument("--show", action="store_true", help="name the clip and time of every false wake")
    p.add_argument("--json", action="store_true", help="print the results as JSON instead of a table")
    p.set_defaults(func=_run_wake)


register_evaluation(register_wake)


def _run_wake(args: argparse.Namespace) -> int:
    from edgevox.engines.wake_micro import EMBEDDED_WAKE_MODELS, read_model_config

    threshold = window = None
    if args.config:
        from edgevox.config import load_config

        wake = load_config(args.config).wake
        threshold, window = wake.threshold, wake.sliding_window
    models = args.models or list(EMBEDDED_WAKE_MODELS)
    clips = load_manifest(args.manifest)
    phrases = {m: str(read_model_config(m)["phrase"]).lower() for m in models}
    for clip in clips:
        said = [m for m, phrase in phrases.items() if phrase in clip.transcript.lower()]
        if said:
            raise ConfigError(f"{clip.path}: its transcript says {phrases[said[0]]!r}; a wake word is not a false wake")
    audio = load_audio(clips)
    scores = [evaluate_model(m, audio, threshold=threshold, sliding_window=window) for m in models]
    if args.json:
        print(json.dumps([_as_dict(s) for s in scores], indent=2))
        return 0
    hours = scores[0].audio_s / 3600 if scores else 0.0
    print(f"{args.manifest}: {len(clips)} clips, {hours:.3f} h of non-wake speech played back to back")
    print(f"{'model':<12} {'threshold':>9} {'window':>6} {'false wakes':>11} {'per hour':>9} {'max p':>6} {'RTF':>7}")
    for s in scores:
        rtf = s.compute_s / s.audio_s if s.audio_s else 0.0
        print(
            f"{s.model:<12} {s.threshold:>9.3f} {s.sliding_window:>6} {len(s.false_wakes):>11} "
            f"{s.per_hour:>9.1f} {s.max_probability:>6.3f} {rtf:>7.4f}"
        )
        if args.show and s.false_wakes:
            print(f"  {', '.join(s.false_wakes)}")
    if hours and any(not s.false_wakes for s in scores):
        print(f"(no false wake in {hours:.3f} h bounds the rate below {3 / hours:.0f} per hour at 95 % confidence)")
    return 0


def _as_dict(s: WakeScore) -> dict[str, Any]:
    return {
        "model": s.model,
        "threshold": s.threshold,
        "sliding_window": s.sliding_window,
        "audio_s": round(s.audio_s, 3),
        "false_wakes": s.false_wakes,
        "false_wakes_per_hour": round(s.per_hour, 2),
        "max_probability": round(s.max_probability, 4),
        "compute_s": round(s.compute_s, 3),
    }
