"""Acoustic echo cancellation: remove the robot's own voice from the microphone signal.

:class:`EchoCanceller` runs WebRTC's echo canceller (AEC3, the one in Chrome and in
LiveKit's console, through ``livekit.rtc.AudioProcessingModule``) on the capture thread. It
is fed the exact audio the speaker played: the samples :class:`~edgevox.voice.echo.PlaybackReference`
keeps, from the position the device has taken (``AudioOut.played_samples``), resampled to the
microphone's rate. WebRTC finds the echo path itself (delay, room, the speaker's level) and
subtracts the echo; what is left of the microphone signal is the people in the room. So a
user talking over the robot is heard, and the robot's reply is not taken for a user.

Why AEC rather than a gate: under ``energy_gate`` and ``half_duplex`` a stop said over the
robot's reply reaches Whisper mixed with the reply, and Whisper often hears the reply ("for the
cat") instead of the stop. Measured with ``edgevox bench spoken-stop`` (figures and the limits
that keep ``aec`` from being the default in ``docs/voice.md``, Echo guard).

The reference stream: WebRTC wants one 10 ms render frame per 10 ms capture frame, render
fed before the capture that holds its echo. Everything the device has taken since the last
frame is fed as render frames at once (never later than the device played it, so the echo
always follows its reference); while nothing plays, one silent render frame goes with each
capture frame. The measured echo delay (:class:`~edgevox.voice.echo.EchoDelay`) is passed as
the stream delay hint.

Threading: one capture thread owns an :class:`EchoCanceller`; it reads the reference under
the reference's lock. Nothing here runs in an audio callback.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from edgevox.engines.resample import Resampler
from edgevox.errors import ModelError
from edgevox.voice.echo import PlaybackReference

FRAME_MS = 10
"""WebRTC's audio processing works on 10 ms frames."""
AEC_RATES_HZ = (16000, 32000, 48000)
MAX_RENDER_BACKLOG_MS = 500
"""Reference audio older than this when it is first seen (the capture thread was stalled) is
skipped: its echo has already passed the microphone."""

ECHO_REMOVED_DB = 20.0
"""While the robot speaks, a frame the canceller made this much quieter (or more) was its echo:
measured on the PulseAudio room, the robot's echo alone loses 37-67 dB, a user talking over it
0-10 dB (what is left is the user)."""
SPEECH_FLOOR_DBFS = -60.0
"""A cleaned frame below this level is not a person: the canceller's comfort noise and residue
sit at -95 to -63 dBFS, and WebRTC's VAD calls them speech (its decision ignores the level).
Speech at a microphone is -50 to -20 dBFS."""
WARMUP_S = 1.0
"""Until the canceller has heard this much of the robot's voice it has not found the echo path
(its delay, on a device 300 ms late): measured on the PulseAudio room, the first 100 ms of the
first reply's echo passed almost untouched (2-5 dB removed) and started a turn in 4 runs of 10.
Until then the capture thread also applies the energy gate (:attr:`EchoCanceller.converged`)."""

_INT16 = 32767.0
_FLOOR = 10.0 ** (SPEECH_FLOOR_DBFS / 20.0)
_REMOVED = 10.0 ** (-ECHO_REMOVED_DB / 20.0)


def apm_module() -> Any:
    try:
        from livekit import rtc
    except ImportError as exc:  # pragma: no cover - livekit is a dependency of the package
        raise ModelError(
            "voice.echo_guard = 'aec' needs WebRTC's audio processing from the 'livekit' package: "
            "pip install livekit (or set voice.echo_guard to 'energy_gate' or 'half_duplex')"
        ) from exc
    return rtc


def erle_db(before: tuple[float, float], after: tuple[float, float]) -> float | None:
    """Echo return loss enhancement in dB between two :attr:`EchoCanceller.energies` readings;
    None when nothing played between them."""
    heard, left = after[0] - before[0], after[1] - before[1]
    if heard <= 0.0:
        return None
    return 10.0 * math.log10(heard / max(left, 1e-12))


class EchoCanceller:
    """WebRTC AEC3 on the capture thread (see the module docstring)."""

    def __init__(self, reference: PlaybackReference, mic_rate_hz: int) -> None:
        if mic_rate_hz not in AEC_RATES_HZ:
            raise ValueError(
                f"echo cancellation runs at {', '.join(map(str, AEC_RATES_HZ))} Hz, not {mic_rate_hz} Hz: "
                "use a VAD at 16000 Hz (the default)"
            )
        self._rtc = apm_module()
        self._apm = self._rtc.AudioProcessingModule(echo_cancellation=True, high_pass_filter=True)
        self.reference = reference
        self.rate_hz = mic_rate_hz
        self.frame_samples = mic_rate_hz * FRAME_MS // 1000
        self._resampler = (
            Resampler(reference.sample_rate_hz, mic_rate_hz) if reference.sample_rate_hz != mic_rate_hz else None
        )
        self._render_pos: int | None = None
        self._render = np.zeros(0, dtype=np.float32)
        """Reference audio at the microphone's rate not fed yet (less than one frame between calls)."""
        self._silence = np.zeros(self.frame_samples, dtype=np.int16)
        self._voice_frames = 0
        self._echo_in = 0.0
        self._echo_out = 0.0

    @property
    def energies(self) -> tuple[float, float]:
        """The energy (sum of squares) of the microphone signal and of the cleaned signal over
        every frame heard while the reference played. Over a stretch where only the robot
        spoke, ``10 log10(in / out)`` of their increase is the echo return loss enhancement
        (:func:`erle_db`); with a user talking over it, that ratio is lower (the user stays)."""
        return self._echo_in, self._echo_out

    @staticmethod
    def heard_user(raw_rms: float, clean_rms: float, *, echo: bool = True) -> bool:
        """Whether a frame the VAD calls voiced after cancellation is a person: it is above
        :data:`SPEECH_FLOOR_DBFS` (the canceller's comfort noise is not, and it goes on for a
        while after the robot stops), and, while the robot's echo may be heard (``echo``), the
        canceller took less than :data:`ECHO_REMOVED_DB` from it."""
        return clean_rms >= _FLOOR and (not echo or clean_rms > _REMOVED * raw_rms)

    def process(self, frame: np.ndarray, played_pos: int, *, playing: bool, delay_ms: float | None) -> np.ndarray:
        """The microphone ``frame`` (a multiple of 10 ms at ``rate_hz``, float32) with the echo of
        what the speaker played removed. ``played_pos``: the output position the device has
        taken (``AudioOut.played_samples``); ``playing``: whether output is queued."""
        self._take_reference(played_pos)
        n = frame.shape[0] // self.frame_samples
        if n * self.frame_samples != frame.shape[0]:
            raise ValueError(f"echo cancellation needs whole 10 ms frames, got {frame.shape[0]} samples")
        pcm = (np.clip(frame, -1.0, 1.0) * _INT16).astype(np.int16)
        out = np.empty(frame.shape[0], dtype=np.float32)
        rtc = self._rtc
        size = self.frame_samples
        fed = self._render.size >= size
        while self._render.size >= size:  # all the device took, at once: never later than it played
            self._feed_render(rtc, size)
        for i in range(n):
            if not fed and not playing:  # nothing plays: silence keeps the two streams in step
                self._apm.process_reverse_stream(rtc.AudioFrame(self._silence.tobytes(), self.rate_hz, 1, size))
            capture = rtc.AudioFrame(pcm[i * size : (i + 1) * size].tobytes(), self.rate_hz, 1, size)
            self._apm.set_stream_delay_ms(round(delay_ms or 0.0))
            self._apm.process_stream(capture)
            out[i * size : (i + 1) * size] = np.frombuffer(capture.data, dtype=np.int16)
        out /= _INT16
        if fed or playing:
            self._echo_in += float(np.sum(np.square(frame, dtype=np.float64)))
            self._echo_out += float(np.sum(np.square(out, dtype=np.float64)))
        return out

    @property
    def converged(self) -> bool:
        """Whether the canceller has heard :data:`WARMUP_S` of the robot's voice."""
        return self._voice_frames * FRAME_MS >= WARMUP_S * 1000

    def _feed_render(self, rtc: Any, size: int) -> None:
        if np.any(self._render[:size]):
            self._voice_frames += 1
        render = (np.clip(self._render[:size], -1.0, 1.0) * _INT16).astype(np.int16)
        self._render = self._render[size:]
        self._apm.process_reverse_stream(rtc.AudioFrame(render.tobytes(), self.rate_hz, 1, size))

    def _take_reference(self, played_pos: int) -> None:
        """Append what the device took since the last frame to the render buffer (mic rate)."""
        if self._render_pos is None or played_pos < self._render_pos:
            self._render_pos = played_pos
            return
        if played_pos == self._render_pos:
            return
        lo = max(self._render_pos, played_pos - self.reference.sample_rate_hz * MAX_RENDER_BACKLOG_MS // 1000)
        audio = self.reference.samples(lo, played_pos)
        self._render_pos = played_pos
        if self._resampler is not None:
            audio = self._resampler.process(audio)
        self._render = np.concatenate([self._render, audio]) if self._render.size else audio
        backlog = self.rate_hz * MAX_RENDER_BACKLOG_MS // 1000
        if self._render.size > backlog:
            self._render = self._render[-backlog:]
