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

The linear stage, for the stop check: AEC3 ends with a suppressor that attenuates whatever it
takes for residual echo, and at the start of double talk that includes the user's first sounds:
the quiet "st" of "stop" under a louder reply, so Whisper hears "Up.", "Not." or "It's got to
right now" for "Stop right now". Speech recognisers are fed a *linear* canceller's output for
that reason (WebRTC itself exports one for ASR; livekit does not expose it). :class:`LinearEcho`
is Speex's MDF adaptive filter (``libspeexdsp``, Debian's ``libspeexdsp1``) without Speex's
residual suppressor: it subtracts its estimate of the echo and leaves everything else, the
user's onset included. Its reference is the played audio read continuously at a fixed lead over
the echo (``LINEAR_LEAD_MS`` before the measured delay), so the filter sees one stable echo path:
from the output's tap (:class:`~edgevox.engines.base.OutputTap`: everything sent to the device,
silence included, on the device's clock) where the output has one, so the path holds from reply
to reply; else from the written positions, which stand still between replies. The capture
thread keeps the last seconds of its output (:meth:`EchoCanceller.linear_tail`), and the stop
check's second listen decodes them too (:mod:`edgevox.voice.stop_check`). Measured in the
PulseAudio room with ``edgevox bench spoken-stop --guard aec`` (figures in ``docs/voice.md``):
on a device 300 ms late, stops heard over the robot's voice went from 18 to 24 of 30, and the
linear stage removes 20-41 dB of the echo once adapted.

Threading: one capture thread owns an :class:`EchoCanceller`; it reads the reference under
the reference's lock. Nothing here runs in an audio callback.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math
from collections import deque
from typing import Any

import numpy as np

from edgevox.engines.base import OutputTap
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

LINEAR_TAIL_MS = 300
"""The longest echo path the linear stage models (a longer filter adapts more slowly: measured on
the test room, 500 ms gave 15 dB after 6 s of speech where 250 ms gave 20). A device later than
this is modelled once its delay is measured (:class:`~edgevox.voice.echo.EchoDelay`)."""
LINEAR_LEAD_MS = 100
"""How far ahead of its echo the linear stage's reference is read (the filter models only
delays >= 0; the device's read position moves in bursts of up to about 60 ms)."""
LINEAR_RESYNC_MS = 120
"""When the reference cursor is this far from where it should be (a stall, a new measure of the
echo delay), it jumps there; the filter then adapts to the new lag."""
LINEAR_KEEP_S = 4.0
"""How much of the linear stage's output the capture thread keeps for the stop check (more than
its longest second-listen utterance, 2.5 s)."""
_SPEEX_SET_SAMPLING_RATE = 24

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


def speex_library() -> Any:
    """``libspeexdsp`` through ctypes, its echo functions typed; a :class:`ModelError` naming the
    package to install when it is missing."""
    name = ctypes.util.find_library("speexdsp")
    try:
        lib = ctypes.CDLL(name or "libspeexdsp.so.1")
    except OSError as exc:
        raise ModelError(
            "voice.echo_guard = 'aec' also runs Speex's linear echo canceller for the stop check, and "
            "libspeexdsp was not found: sudo apt-get install libspeexdsp1 (scripts/setup.sh installs it), "
            "or set voice.echo_guard to 'energy_gate'"
        ) from exc
    lib.speex_echo_state_init.restype = ctypes.c_void_p
    lib.speex_echo_state_init.argtypes = [ctypes.c_int, ctypes.c_int]
    lib.speex_echo_ctl.restype = ctypes.c_int
    lib.speex_echo_ctl.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
    lib.speex_echo_cancellation.restype = None
    lib.speex_echo_cancellation.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    lib.speex_echo_state_destroy.restype = None
    lib.speex_echo_state_destroy.argtypes = [ctypes.c_void_p]
    return lib


class LinearEcho:
    """Speex's MDF linear echo canceller (no residual suppressor) on 10 ms int16 frames: the
    microphone minus the filter's estimate of the echo of ``reference`` (see the module
    docstring). One thread at a time."""

    def __init__(self, rate_hz: int, frame_samples: int, tail_ms: int = LINEAR_TAIL_MS) -> None:
        self._lib = speex_library()
        self.frame_samples = frame_samples
        self._state = self._lib.speex_echo_state_init(frame_samples, rate_hz * tail_ms // 1000)
        if not self._state:
            raise ModelError(f"libspeexdsp could not make an echo canceller at {rate_hz} Hz")
        rate = ctypes.c_int(rate_hz)
        self._lib.speex_echo_ctl(self._state, _SPEEX_SET_SAMPLING_RATE, ctypes.byref(rate))
        self._out = np.empty(frame_samples, dtype=np.int16)

    def process(self, mic: np.ndarray, reference: np.ndarray) -> np.ndarray:
        """One frame: int16 ``mic`` and the int16 ``reference`` played at the same time, each
        :attr:`frame_samples` long; returns a new int16 array."""
        mic = np.ascontiguousarray(mic, dtype=np.int16)
        reference = np.ascontiguousarray(reference, dtype=np.int16)
        if mic.shape[0] != self.frame_samples or reference.shape[0] != self.frame_samples:
            raise ValueError(f"LinearEcho takes frames of {self.frame_samples} samples")
        self._lib.speex_echo_cancellation(self._state, mic.ctypes.data, reference.ctypes.data, self._out.ctypes.data)
        return self._out.copy()

    def __del__(self) -> None:
        state, self._state = getattr(self, "_state", None), None
        if state:
            self._lib.speex_echo_state_destroy(state)


class EchoCanceller:
    """WebRTC AEC3 on the capture thread, and the linear stage beside it (see the module docstring)."""

    def __init__(self, reference: PlaybackReference, mic_rate_hz: int, *, tap: OutputTap | None = None) -> None:
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
        self._linear = LinearEcho(mic_rate_hz, self.frame_samples)
        self._tap = tap
        """The output's record of what it sent, silence included (:class:`~edgevox.engines.base.OutputTap`)."""
        self._lin_rate = 0
        self._lin_resampler: Resampler | None = None
        self._lin_cursor: int | None = None
        """Output position of the next reference sample the linear stage reads (the end of its
        last read); None while idle."""
        self._lin_ref = np.zeros(0, dtype=np.float32)
        self._lin_out: deque[np.ndarray] = deque(maxlen=int(LINEAR_KEEP_S * 1000 / FRAME_MS))
        self._lin_echo_out = 0.0

    @property
    def energies(self) -> tuple[float, float]:
        """The energy (sum of squares) of the microphone signal and of the cleaned signal over
        every frame heard while the reference played. Over a stretch where only the robot
        spoke, ``10 log10(in / out)`` of their increase is the echo return loss enhancement
        (:func:`erle_db`); with a user talking over it, that ratio is lower (the user stays)."""
        return self._echo_in, self._echo_out

    @property
    def linear_energies(self) -> tuple[float, float]:
        """As :attr:`energies`, for the linear stage's output (its ERLE is lower: no suppressor)."""
        return self._echo_in, self._lin_echo_out

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
        reference = self._linear_reference(n * size, played_pos, playing=playing or fed, delay_ms=delay_ms)
        for i in range(n):
            part = slice(i * size, (i + 1) * size)
            self._lin_out.append(self._linear.process(pcm[part], reference[part]))
            if fed or playing:
                self._lin_echo_out += float(np.sum(np.square(self._lin_out[-1] / _INT16, dtype=np.float64)))
        if fed or playing:
            self._echo_in += float(np.sum(np.square(frame, dtype=np.float64)))
            self._echo_out += float(np.sum(np.square(out, dtype=np.float64)))
        return out

    def linear_tail(self, n_samples: int) -> np.ndarray | None:
        """The linear stage's output for the last ``n_samples`` the canceller processed (float32),
        or None when it keeps less than that (:data:`LINEAR_KEEP_S`)."""
        if n_samples <= 0 or n_samples > len(self._lin_out) * self.frame_samples:
            return None
        frames = -(-n_samples // self.frame_samples)
        tail = np.concatenate(list(self._lin_out)[-frames:])[-n_samples:]
        return tail.astype(np.float32) / _INT16

    def _linear_reference(self, n: int, played_pos: int, *, playing: bool, delay_ms: float | None) -> np.ndarray:
        """The next ``n`` reference samples (int16, mic rate) for the linear stage: what was
        played, read continuously :data:`LINEAR_LEAD_MS` ahead of its echo (never past what the
        output has taken: with an echo delay under the lead, the lead is the delay). From the output's
        tap when it has one (one clock, silence included: the filter keeps its echo path from
        reply to reply); else from the written positions, idle between replies."""
        tap = self._tap if self._tap is not None and self._tap.tap_rate_hz else None
        if tap is not None:
            rate, position, read, active = tap.tap_rate_hz, tap.tapped_samples, tap.tap, True
        else:
            rate, position, read, active = self.reference.sample_rate_hz, played_pos, self.reference.samples, playing
        if rate != self._lin_rate:
            self._lin_rate = rate
            self._lin_resampler = Resampler(rate, self.rate_hz) if rate != self.rate_hz else None
            self._lin_cursor = None
        target = position - round(max(0.0, (delay_ms or 0.0) - LINEAR_LEAD_MS) * rate / 1000)
        cursor = self._lin_cursor
        off = LINEAR_RESYNC_MS * rate // 1000
        if cursor is not None and not active and cursor - target > off:
            cursor = None  # the reply and its echo are over: idle until the next one
        elif active and (cursor is None or abs(cursor - target) > off):
            cursor = target - math.ceil(n * rate / self.rate_hz)  # this read ends at the target
            self._lin_ref = np.zeros(0, dtype=np.float32)
            if self._lin_resampler is not None:
                self._lin_resampler.reset()
        if cursor is not None:
            while self._lin_ref.shape[0] < n:
                m = max(1, math.ceil((n - self._lin_ref.shape[0]) * rate / self.rate_hz))
                chunk = read(cursor, cursor + m)
                cursor += m
                if self._lin_resampler is not None:
                    chunk = self._lin_resampler.process(chunk)
                self._lin_ref = np.concatenate([self._lin_ref, chunk])
        self._lin_cursor = cursor
        ref = np.zeros(n, dtype=np.float32)
        k = min(n, self._lin_ref.shape[0])
        ref[:k] = self._lin_ref[:k]
        self._lin_ref = self._lin_ref[k:]
        return (np.clip(ref, -1.0, 1.0) * _INT16).astype(np.int16)

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
