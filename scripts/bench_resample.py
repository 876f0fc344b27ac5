"""Resampling: the hand-written polyphase filter against soxr, one-shot and streaming, in one run.

``edgevox.engines.resample`` uses soxr for one-shot :func:`resample` and keeps the short
polyphase filter for the streaming :class:`Resampler`; this script shows why. For the
rate pairs edgevox meets (USB microphones at 48/44.1 kHz down to 16 kHz, the Piper
voice's 22.05 kHz to 16/48 kHz speakers) it prints, "old" being the hand-written filter
and "soxr" being soxr:

* one-shot quality: SNR of a multi-tone signal against the exact tones sampled at the
  new rate, pass-band gain at 90 % of the lower Nyquist, aliasing of tones above the new
  Nyquist, and the SNR of real speech (``../shared/speech``) sent 16 -> 48 -> 16 kHz;
* streaming (10 ms blocks): total length after ``flush`` against the one-shot length,
  the error at block boundaries against elsewhere (a click shows up as a larger boundary
  error), and the output held inside the stream (mean / max milliseconds: latency);
* speed: microseconds per 10 ms and 20 ms device block (streaming) and milliseconds per
  second of audio (one-shot), with the ratio old / soxr.

The old one-shot function is read from git (``--baseline-rev``, the commit before the
switch), so the baseline is measured in the same run on the same machine.

    python scripts/bench_resample.py [--baseline-rev 92f1400] [--repeat 5]
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
import time
import types
import wave
from pathlib import Path
from typing import Any

import numpy as np

from edgevox.engines import resample as new

ROOT = Path(__file__).resolve().parent.parent
PAIRS = [(48000, 16000), (44100, 16000), (22050, 16000), (22050, 48000), (16000, 48000)]


class SoxrStream:
    """soxr.ResampleStream with the Resampler interface (what a switch of the stream would use)."""

    def __init__(self, in_rate_hz: int, out_rate_hz: int) -> None:
        self.out_rate_hz = out_rate_hz
        self._s = new.soxr.ResampleStream(in_rate_hz, out_rate_hz, 1, dtype="float32", quality=new.QUALITY)

    @property
    def delay_s(self) -> float:
        return 0.0  # its output is delay-compensated; what it holds back is measured instead

    def process(self, block: np.ndarray) -> np.ndarray:
        return self._s.resample_chunk(np.ascontiguousarray(block, dtype=np.float32))

    def flush(self) -> np.ndarray:
        return self._s.resample_chunk(np.zeros(0, dtype=np.float32), last=True)


def load_old(rev: str) -> Any:
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{rev}:edgevox/engines/resample.py"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    module = types.ModuleType("old_resample")
    exec(compile(source, f"{rev}:resample.py", "exec"), module.__dict__)  # noqa: S102 - our own file from git
    return module


def tones(freqs: list[float], rate: int, seconds: float, t0_s: float = 0.0) -> np.ndarray:
    t = np.arange(int(rate * seconds)) / rate - t0_s
    return (sum(np.sin(2 * np.pi * f * t + i) for i, f in enumerate(freqs)) / len(freqs)).astype(np.float32)


def db(x: float) -> float:
    return 20 * np.log10(max(x, 1e-12))


def rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(x, dtype=np.float64))))


def quality(mod: Any, a: int, b: int) -> dict[str, float]:
    nyq = min(a, b) / 2
    freqs = [f for f in (150.0, 440.0, 1000.0, 2500.0, 0.6 * nyq, 0.8 * nyq)]
    y = mod.resample(tones(freqs, a, 1.0), a, b)
    ref = tones(freqs, b, 1.0)
    m = b // 20  # skip the edges (filter start-up)
    snr = db(rms(ref[m:-m]) / rms(y[m:-m] - ref[m:-m]))
    edge = 0.9 * nyq
    gain = db(rms(mod.resample(tones([edge], a, 1.0), a, b)[m:-m]) / rms(tones([edge], b, 1.0)[m:-m]))
    out: dict[str, float] = {"snr_db": snr, "gain_0.9nyq_db": gain}
    if b < a:
        worst = -200.0
        for k in (1.1, 1.25, 1.5, 1.9):
            f = k * b / 2
            if f < a / 2:
                worst = max(worst, db(rms(mod.resample(tones([f], a, 1.0), a, b)[m:-m]) / rms(tones([f], a, 1.0))))
        out["alias_db"] = worst
    return out


def speech_round_trip(mod: Any, clips: list[np.ndarray]) -> float:
    errs, refs = [], []
    for x in clips:
        y = mod.resample(mod.resample(x, 16000, 48000), 48000, 16000)
        m = 800
        errs.append(y[m:-m] - x[m:-m])
        refs.append(x[m:-m])
    return db(rms(np.concatenate(refs)) / rms(np.concatenate(errs)))


def best_of(fn: Any, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def speed(mod: Any, a: int, b: int, repeat: int) -> dict[str, float]:
    x = np.random.default_rng(0).standard_normal(a * 2).astype(np.float32)
    out: dict[str, float] = {}
    for block_ms in (10, 20):
        n = a * block_ms // 1000

        def stream(n: int = n) -> None:
            r = mod.Resampler(a, b)
            for i in range(0, x.shape[0] - n + 1, n):
                r.process(x[i : i + n])

        blocks = x.shape[0] // n
        out[f"us_per_{block_ms}ms_block"] = best_of(stream, repeat) / blocks * 1e6
    out["ms_per_s_oneshot"] = best_of(lambda: mod.resample(x, a, b), repeat) / 2 * 1e3
    return out


def streaming(mod: Any, a: int, b: int) -> dict[str, float]:
    x = tones([440.0, 3000.0], a, 1.0)
    one = mod.resample(x, a, b)
    n = a // 100
    r = mod.Resampler(a, b)
    parts, held, boundaries = [], [], []
    produced = 0
    for i in range(0, x.shape[0], n):
        y = r.process(x[i : i + n])
        parts.append(y)
        produced += y.shape[0]
        boundaries.append(produced)
        held.append((min(i + n, x.shape[0]) / a - produced / b) * 1e3)
    if r.delay_s:  # the polyphase filter releases every output at once, late by its group delay
        held = [r.delay_s * 1e3] * len(held)
    parts.append(r.flush())
    s = np.concatenate(parts)
    # The polyphase filter is not delay-compensated when streaming (its output lags by its
    # group delay, about 1 ms): compare with the tones delayed by as much.
    lag_s = r.delay_s
    ref = tones([440.0, 3000.0], b, 1.0, t0_s=lag_s)
    s_al = s[: ref.shape[0]]
    err = np.abs(s_al - ref[: s_al.shape[0]])
    m = b // 20
    bidx = np.array([p for p in boundaries if m < p < s_al.shape[0] - m])
    near = np.zeros(err.shape[0], dtype=bool)
    for d in (-1, 0, 1):
        near[np.clip(bidx + d, 0, err.shape[0] - 1)] = True
    near[:m] = near[-m:] = False
    elsewhere = ~near
    elsewhere[:m] = elsewhere[-m:] = False
    return {
        "len_stream": float(s.shape[0]),
        "len_oneshot": float(one.shape[0]),
        "max_err_at_boundaries": float(err[near].max()),
        "max_err_elsewhere": float(err[elsewhere].max()),
        "held_ms_mean": float(np.mean(held[10:])),
        "held_ms_max": float(np.max(held[10:])),
    }


def speech_clips(limit: int = 12) -> list[np.ndarray]:
    folder = ROOT.parent / "shared" / "speech"
    manifest = folder / "MANIFEST.tsv"
    if not manifest.exists():
        return []
    clips = []
    with manifest.open() as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            with wave.open(str(folder / row["file"])) as w:
                if w.getframerate() != 16000 or w.getnchannels() != 1 or w.getsampwidth() != 2:
                    continue
                clips.append(np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float32) / 32768)
            if len(clips) >= limit:
                break
    return clips


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline-rev", default="92f1400", help="git revision holding the hand-written resampler")
    ap.add_argument("--repeat", type=int, default=5, help="timing repetitions (best of)")
    args = ap.parse_args(argv)
    impls = {
        "old": load_old(args.baseline_rev),  # one-shot and stream: the hand-written filter
        "edgevox": new,  # one-shot: soxr; stream: the polyphase filter, exact length after flush
        "soxr": types.SimpleNamespace(Resampler=SoxrStream, resample=new.resample),  # stream: ResampleStream
    }
    print(f"soxr {new.soxr.__version__}, quality {new.QUALITY}; old = {args.baseline_rev}'s hand-written filter")
    print(f"  {'':9s} {'':28s} " + "".join(f"{name:>12s}" for name in impls) + "   old/edgevox  old/soxr")

    def row(title: str, values: dict[str, dict[str, float]], ratio: bool = False) -> None:
        for key in values["edgevox"]:
            cells = "".join(f"{values[n].get(key, float('nan')):12.4g}" for n in impls)
            extra = ""
            if ratio:
                extra = f"   {values['old'][key] / values['edgevox'][key]:9.1f}x {values['old'][key] / values['soxr'][key]:8.1f}x"
            print(f"  {title:9s} {key:28s} {cells}{extra}")

    for a, b in PAIRS:
        print(f"\n== {a} -> {b} Hz")
        row("one-shot", {n: quality(m, a, b) for n, m in impls.items() if n != "soxr"} | {"soxr": {}})
        row("stream", {n: streaming(m, a, b) for n, m in impls.items()})
        row("speed", {n: speed(m, a, b, args.repeat) for n, m in impls.items()}, ratio=True)
    clips = speech_clips()
    if clips:
        total = sum(c.shape[0] for c in clips) / 16000
        print(f"\nspeech 16k->48k->16k one-shot round trip, {len(clips)} clips of ../shared/speech ({total:.0f} s):")
        print(
            f"  SNR old {speech_round_trip(impls['old'], clips):.1f} dB   edgevox (soxr) {speech_round_trip(new, clips):.1f} dB"
        )
    else:
        print("\n(../shared/speech not found: speech round trip skipped)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
