"""Output gain and a look-ahead peak limiter for synthesized speech (plain numpy).

Why: Piper scales every sentence so its peak is exactly full scale, so each sentence
gets its own gain (a short "Stop!" and a long sentence end up at different levels)
and every reply has samples at +-1.0. :class:`~edgevox.engines.tts_piper.PiperTTS`
turns that off and applies one fixed gain (``tts.gain_db``) to every sentence, then
this limiter keeps the peaks under :data:`CEILING` without clipping them.

Design: a TTS engine hands over whole sentences, so the limiter looks at the whole
array (no streaming state, no added latency). The gain each sample needs is
``min(1, ceiling / |x|)``; its minimum over ``+-window`` followed by a moving average
over ``+-window`` is a smooth gain curve that is never above what any sample needs
(every sample averaged over has the sample in its minimum's window). So the gain
ramps down over one window before a peak and back up over one window after it; a
run of peaks (one per pitch period in a loud vowel) holds it down instead of letting
it pump between them, and audio with no peak over the ceiling within a window is
left exactly as it was. The rejected alternative, a memoryless soft clipper (tanh),
bends each peak's waveform, which is audible distortion on every loud vowel.
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np

CEILING: Final = 10 ** (-1 / 20)
"""Largest absolute sample value the limiter lets through: -1 dBFS (0.891)."""

WINDOW_S: Final = 0.010
"""Half-width of the gain's minimum and average windows in seconds (a 20 ms ramp each way)."""


def db_to_gain(gain_db: float) -> float:
    """Linear amplitude factor for ``gain_db`` decibels."""
    return float(10 ** (gain_db / 20))


def limiter_gain(audio: np.ndarray, sample_rate_hz: int, *, ceiling: float = CEILING) -> np.ndarray:
    """The smooth gain curve (float32, each value in ``(0, 1]``) that keeps ``audio * gain`` under ``ceiling``."""
    x = np.abs(np.asarray(audio, dtype=np.float32).reshape(-1))
    need = np.ones(x.shape[0], dtype=np.float32)
    loud = x > ceiling
    if not loud.any():
        return need
    need[loud] = ceiling / x[loud]
    half = max(1, int(round(WINDOW_S * sample_rate_hz)))
    return _moving_mean(_moving_min(need, half), half)


def limit(audio: np.ndarray, sample_rate_hz: int, *, ceiling: float = CEILING) -> np.ndarray:
    """``audio`` with its peaks brought under ``ceiling`` by :func:`limiter_gain` (float32)."""
    x = np.asarray(audio, dtype=np.float32).reshape(-1)
    y = x * limiter_gain(x, sample_rate_hz, ceiling=ceiling)
    # The curve guarantees it up to float rounding; the clip only removes that rounding.
    return np.clip(y, -ceiling, ceiling).astype(np.float32, copy=False)


def _moving_min(values: np.ndarray, half: int) -> np.ndarray:
    """Minimum over ``[n - half, n + half]`` for every ``n`` (van Herk / Gil-Werman, O(n)); edges padded with 1."""
    width = 2 * half + 1
    n = values.shape[0]
    blocks = math.ceil((n + 2 * half) / width) + 1
    padded = np.ones(blocks * width, dtype=np.float32)
    padded[half : half + n] = values
    grid = padded.reshape(blocks, width)
    prefix = np.minimum.accumulate(grid, axis=1).reshape(-1)
    suffix = np.minimum.accumulate(grid[:, ::-1], axis=1)[:, ::-1].reshape(-1)
    starts = np.arange(n)
    return np.minimum(suffix[starts], prefix[starts + width - 1])


def _moving_mean(values: np.ndarray, half: int) -> np.ndarray:
    """Mean over ``[n - half, n + half]`` for every ``n``; edges padded with the edge values.

    (Padding a moving minimum with its edge values keeps the mean under what every sample
    needs: the first minimum's window covers every sample within ``half`` of the start.)"""
    v = values.astype(np.float64)
    padded = np.concatenate([np.full(half + 1, v[0]), v, np.full(half, v[-1])])
    sums = np.cumsum(padded)
    width = 2 * half + 1
    return ((sums[width:] - sums[:-width]) / width).astype(np.float32)
