"""Sample-rate conversion: one-shot with libsoxr, streaming with a short polyphase filter.

Why a real resampler: going from a USB microphone's 48 kHz (or 44.1 kHz) down to
16 kHz without a low-pass filter folds everything above 8 kHz back into the
speech band; Whisper and the VAD then hear hiss.

One-shot (:func:`resample`: a WAV file, a synthesized sentence) uses soxr's "HQ"
recipe. Measured by ``scripts/bench_resample.py`` against the hand-written filter
it replaced: 43 -> 135 dB SNR against exact tones at 48 -> 16 kHz, aliasing -91 ->
-137 dB, flat to 90 % of the lower Nyquist (the old filter lost 4 dB there), real
speech sent 16 -> 48 -> 16 kHz 25 -> 33 dB SNR, and 16-40x faster.

Streaming (:class:`Resampler`: device blocks in ``SoundDeviceIn``/``SoundDeviceOut``
and the capture thread) keeps its own short Kaiser windowed-sinc filter, because
soxr's stream (``soxr.ResampleStream``) works in internal blocks and holds output
back: 22 ms on average and up to 40 ms at "HQ" (11-20 ms at "LQ", which cuts the
top of the speech band; 12-15 ms in its variable-rate mode), where this filter
releases every sample about 1 ms after its input arrives. Held output is latency
on the microphone path, and on the speaker path it is audio that
``SoundDeviceOut.played_samples`` would count as played while it sits in the
resampler until the next write (tests/engines/test_audio_sounddevice.py pins that
count). soxr is faster per block (~6 vs ~55 us per 10 ms block), but both are
under 1 % of a core.

Streaming design: for a rational ratio ``up/down`` (after dividing by the gcd),
output sample ``n`` sits at position ``n*down`` of the input upsampled by ``up``.
A Kaiser-windowed sinc low-pass ``h`` designed at the upsampled rate is split
into ``up`` phases of ``taps`` coefficients each, so every output sample is one
dot product of ``taps`` input samples with one phase. :class:`Resampler` keeps
the last ``taps - 1`` input samples between calls, so block boundaries leave no
clicks.

Threading: a :class:`Resampler` is not thread-safe; each stream owns one and
calls it from one thread (never from an audio callback: it allocates).
"""

from __future__ import annotations

import math

import numpy as np
import soxr  # type: ignore[import-untyped]  # soxr ships no type information

QUALITY = "HQ"
"""soxr recipe for :func:`resample`: "HQ" (20-bit precision).

"LQ" rolls off early (-2 dB at 80 % and -8 dB at 85 % of Nyquist: 6.8 kHz at 16 kHz);
"VHQ" costs more for no audible gain."""

_ZERO_CROSSINGS = 16
"""Half-length of the sinc in zero crossings of the lower of the two rates."""
_ROLLOFF = 0.92
"""Pass-band edge as a fraction of the lower Nyquist frequency."""
_KAISER_BETA = 8.6
"""About 80 dB stop-band attenuation."""


class Resampler:
    """Streaming rational resampler from ``in_rate_hz`` to ``out_rate_hz`` (mono float32).

    Feed blocks of any size to :meth:`process`: every output sample comes out as soon
    as its input is in (late by the filter's fixed :attr:`delay_s`, about 1 ms), and
    the concatenated outputs equal the resampling of the concatenated inputs. After
    :meth:`flush`, the stream has given exactly ``round(inputs * out / in)`` samples,
    the one-shot length. :meth:`reset` forgets the history (after a ``clear()``).
    """

    def __init__(self, in_rate_hz: int, out_rate_hz: int) -> None:
        if int(in_rate_hz) <= 0 or int(out_rate_hz) <= 0:
            raise ValueError(f"Resampler({in_rate_hz}, {out_rate_hz}): rates must be positive integers in Hz")
        self.in_rate_hz = int(in_rate_hz)
        self.out_rate_hz = int(out_rate_hz)
        g = math.gcd(self.in_rate_hz, self.out_rate_hz)
        self.up = self.out_rate_hz // g
        self.down = self.in_rate_hz // g
        self.passthrough = self.up == self.down
        if self.passthrough:
            self.taps = 1
            self._phases = np.ones((1, 1), dtype=np.float32)
        else:
            # Filter length scales with the decimation so the transition band stays
            # proportional to the lower of the two rates.
            self.taps = 2 * _ZERO_CROSSINGS * max(1, math.ceil(self.down / self.up))
            self._phases = _design_phases(self.up, self.down, self.taps)
        # Group delay in upsampled samples (the filter's centre tap; see _design_phases).
        self._delay_up = (self.taps * self.up - 2) // 2
        self.reset()

    @property
    def delay_s(self) -> float:
        """Group delay of the filter in seconds (0 when no conversion is needed)."""
        if self.passthrough:
            return 0.0
        return self._delay_up / (self.in_rate_hz * self.up)

    def reset(self) -> None:
        self._in_count = 0
        self._out_count = 0
        self._history = np.zeros(max(0, self.taps - 1), dtype=np.float32)
        # Position of the next output sample in upsampled coordinates, measured from
        # the first sample of ``_history``.
        self._next_pos = (self.taps - 1) * self.up

    def process(self, block: np.ndarray) -> np.ndarray:
        """Resample one block; returns float32 (possibly empty)."""
        x = np.asarray(block, dtype=np.float32).reshape(-1)
        if self.passthrough:
            return x.copy()
        self._in_count += x.shape[0]
        buf = np.concatenate([self._history, x])
        n_in = buf.shape[0]
        # Output positions whose newest needed input sample is already in ``buf``.
        last_pos = (n_in - 1) * self.up + (self.up - 1)
        if self._next_pos > last_pos:
            count = 0
        else:
            count = (last_pos - self._next_pos) // self.down + 1
        if count:
            positions = self._next_pos + self.down * np.arange(count, dtype=np.int64)
            bases = positions // self.up
            phases = positions % self.up
            idx = bases[:, None] - np.arange(self.taps, dtype=np.int64)[None, :]
            out = np.einsum("ij,ij->i", buf[idx], self._phases[phases]).astype(np.float32)
            self._next_pos += self.down * count
        else:
            out = np.zeros(0, dtype=np.float32)
        keep = self.taps - 1
        consumed = n_in - keep
        self._history = buf[consumed:].copy() if keep else np.zeros(0, dtype=np.float32)
        self._next_pos -= consumed * self.up
        self._out_count += out.shape[0]
        return out

    def flush(self) -> np.ndarray:
        """End of stream: the outputs still owed so the total is the one-shot length; then reset."""
        if self.passthrough:
            return np.zeros(0, dtype=np.float32)
        owed = int(round(self._in_count * self.out_rate_hz / self.in_rate_hz)) - self._out_count
        out = np.zeros(0, dtype=np.float32)
        if owed > 0:
            # Zeros push the last inputs through the filter (its delay is under ``taps`` inputs).
            pad = np.zeros(self.taps + int(np.ceil(owed * self.in_rate_hz / self.out_rate_hz)), dtype=np.float32)
            out = self.process(pad)[:owed]
        self.reset()
        return out


def _design_phases(up: int, down: int, taps: int) -> np.ndarray:
    """Polyphase matrix ``(up, taps)``: row ``p`` holds ``h[p + k*up]`` for ``k`` in ``0..taps-1``."""
    length = taps * up
    # Cut-off in cycles per upsampled sample: the lower Nyquist, times the roll-off.
    cutoff = _ROLLOFF * 0.5 / max(up, down)
    # ``taps`` is even, so ``length`` is even: design an odd-length symmetric filter and
    # pad one zero, which puts the centre (the group delay) on a whole upsampled sample.
    odd = length - 1
    t = np.arange(odd, dtype=np.float64) - (odd - 1) / 2
    h = 2 * cutoff * np.sinc(2 * cutoff * t) * np.kaiser(odd, _KAISER_BETA)
    h = np.concatenate([h, [0.0]])
    # Upsampling by ``up`` inserts zeros, so the filter needs a DC gain of ``up``.
    h *= up / h.sum()
    return h.reshape(taps, up).T.astype(np.float32).copy()


def resample(audio: np.ndarray, in_rate_hz: int, out_rate_hz: int, *, quality: str = QUALITY) -> np.ndarray:
    """Resample a whole signal; the result has ``round(len * out / in)`` samples, aligned in time."""
    x = np.ascontiguousarray(np.asarray(audio, dtype=np.float32).reshape(-1))
    if int(in_rate_hz) <= 0 or int(out_rate_hz) <= 0:
        raise ValueError(f"resample({in_rate_hz}, {out_rate_hz}): rates must be positive integers in Hz")
    if int(in_rate_hz) == int(out_rate_hz):
        return x.copy()
    n_out = int(round(x.shape[0] * int(out_rate_hz) / int(in_rate_hz)))
    if x.shape[0] == 0:
        return np.zeros(0, dtype=np.float32)
    y = np.asarray(soxr.resample(x, int(in_rate_hz), int(out_rate_hz), quality=quality), dtype=np.float32)
    if y.shape[0] > n_out:
        return y[:n_out].copy()
    if y.shape[0] < n_out:
        return np.concatenate([y, np.zeros(n_out - y.shape[0], dtype=np.float32)])
    return y
