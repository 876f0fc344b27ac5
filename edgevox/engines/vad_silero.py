"""Silero VAD v6 (ONNX) and a VAD that confirms webrtcvad's frames with it.

webrtcvad is a GMM on band energies: on steady broadband noise (a dishwasher, a
fan, a laptop) it marks nearly every frame as speech, so the segmenter starts
utterances that Whisper then fills with hallucinated words. Silero is a small
neural network trained to tell speech from noise; its model ships with
faster-whisper (``faster_whisper/assets/silero_vad_v6.onnx``), so it costs no
download.

The model (as exported for faster-whisper, see ``faster_whisper/vad.py``) takes
``input`` float32 ``[n, 576]`` = the last 64 samples of the previous chunk (the
context) followed by 512 new samples at 16 kHz, plus the LSTM state ``h`` and
``c`` (each ``[1, 1, 128]``), and returns ``speech_probs`` ``[n]`` and the new
``hn`` / ``cn``. Rows of ``input`` are consecutive chunks, so streaming is one
row per call with the state carried over.

:class:`ConfirmedVAD` runs webrtcvad on every frame (10/20/30 ms) and buffers the
samples; whenever 512 new samples (32 ms) are buffered it asks Silero once and
updates a hysteresis flag (speech on at ``threshold``, off below
``threshold - off_margin``). A frame is voiced only if webrtcvad says so *and* the
flag is on. Cost, measured on one core: ~0.1 ms per Silero chunk, i.e. ~0.06 ms
per 20 ms frame on average, nothing blocking (``edgevox eval endpoint`` prints it).

Silero's decision lags the frame by up to one chunk (32 ms) plus the network's
own rise time. At a start this delays the onset by a frame or two (the pre-roll
keeps the audio); at an end webrtcvad usually drops first, so endpointing is
not slower.

Rejected alternative: Silero alone (without webrtcvad). Its hysteresis keeps it
"on" through short gaps between words, which hides the pauses the segmenter
uses for speculative STT, and its 32 ms chunks do not line up with our frames.

Not thread-safe: one instance per audio stream (the capture thread's).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any, Final

import numpy as np

from edgevox.engines._util import as_mono_float32, require

SILERO_RATE_HZ = 16000
DEFAULT_THRESHOLD: Final = 0.5
"""Speech probability at which :class:`ConfirmedVAD` turns speech on (``vad.silero_threshold``)."""
DEFAULT_OFF_MARGIN: Final = 0.15
"""Speech turns off below the threshold minus this (hysteresis)."""
CHUNK_SAMPLES = 512
"""New samples per Silero call (32 ms at 16 kHz)."""
CONTEXT_SAMPLES = 64
"""Samples of the previous chunk prepended to each call."""
_STATE_SHAPE = (1, 1, 128)


def default_model_path() -> Path:
    """The Silero v6 model installed with faster-whisper (found without importing faster-whisper)."""
    spec = importlib.util.find_spec("faster_whisper")
    if spec is None or not spec.submodule_search_locations:
        require("faster_whisper", package="faster-whisper", extra="stt", purpose="the Silero VAD model it ships")
        raise RuntimeError("faster_whisper is importable but has no package folder")  # pragma: no cover
    return Path(next(iter(spec.submodule_search_locations))) / "assets" / "silero_vad_v6.onnx"


class SileroVAD:
    """Streaming speech probability per 512-sample chunk of 16 kHz audio.

    ``probability(chunk)`` carries the LSTM state and the 64-sample context from
    one call to the next; ``reset()`` forgets both (a new stream).
    """

    sample_rate_hz = SILERO_RATE_HZ
    chunk_samples = CHUNK_SAMPLES

    def __init__(self, model_path: str | Path | None = None) -> None:
        ort = require("onnxruntime", package="onnxruntime", extra="stt", purpose="the Silero VAD")
        path = Path(model_path) if model_path is not None else default_model_path()
        if not path.is_file():
            raise FileNotFoundError(f"Silero VAD model not found at {path} (it ships with faster-whisper >= 1.2)")
        opts = ort.SessionOptions()
        # One thread each: the capture thread calls this every 32 ms; a thread pool would
        # only add wake-up latency and compete with STT for the cores.
        opts.inter_op_num_threads = 1
        opts.intra_op_num_threads = 1
        opts.enable_cpu_mem_arena = False
        opts.log_severity_level = 4
        self._session: Any = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"], sess_options=opts)
        self._input = np.zeros((1, CONTEXT_SAMPLES + CHUNK_SAMPLES), dtype=np.float32)
        self.reset()

    def reset(self) -> None:
        self._h = np.zeros(_STATE_SHAPE, dtype=np.float32)
        self._c = np.zeros(_STATE_SHAPE, dtype=np.float32)
        self._input[:] = 0.0

    def probability(self, chunk: np.ndarray) -> float:
        """Speech probability (0..1) of ``chunk``: exactly 512 float32 samples at 16 kHz."""
        samples = as_mono_float32(chunk)
        if samples.shape[0] != CHUNK_SAMPLES:
            raise ValueError(f"SileroVAD.probability: chunk has {samples.shape[0]} samples, expected {CHUNK_SAMPLES}")
        # Keep the previous chunk's tail as this call's context.
        self._input[0, :CONTEXT_SAMPLES] = self._input[0, -CONTEXT_SAMPLES:]
        self._input[0, CONTEXT_SAMPLES:] = samples
        prob, self._h, self._c = self._session.run(None, {"input": self._input, "h": self._h, "c": self._c})
        return float(prob[0])


class ConfirmedVAD:
    """A frame VAD (webrtcvad) whose "speech" must be confirmed by Silero.

    ``is_speech(frame)`` is ``inner.is_speech(frame) and silero_on``, where
    ``silero_on`` follows Silero's latest probability with hysteresis: it turns on
    at ``p >= threshold`` and off at ``p < threshold - off_margin``. Frames at
    32 or 48 kHz are decimated to 16 kHz for Silero by averaging (webrtcvad
    still sees the original frames).
    """

    def __init__(
        self,
        inner: Any,
        silero: SileroVAD,
        *,
        threshold: float = DEFAULT_THRESHOLD,
        off_margin: float = DEFAULT_OFF_MARGIN,
    ) -> None:
        if not 0.0 < threshold < 1.0:
            raise ValueError(f"ConfirmedVAD threshold = {threshold}: must be between 0 and 1 (exclusive)")
        if not 0.0 <= off_margin < threshold:
            raise ValueError(f"ConfirmedVAD off_margin = {off_margin}: must be >= 0 and below threshold ({threshold})")
        rate = int(inner.sample_rate_hz)
        if rate % SILERO_RATE_HZ:
            raise ValueError(
                f"ConfirmedVAD: sample_rate_hz = {rate}: Silero needs 16 kHz or a multiple (32000, 48000); "
                "use vad.confirm: none at this rate"
            )
        self.inner = inner
        self.silero = silero
        self.sample_rate_hz = rate
        self.frame_ms = int(inner.frame_ms)
        self.frame_samples = rate * self.frame_ms // 1000
        self.threshold = threshold
        self.off_threshold = threshold - off_margin
        self._decimate = rate // SILERO_RATE_HZ
        self._buf = np.zeros(CHUNK_SAMPLES + self.frame_samples, dtype=np.float32)
        self._reset_state()

    def _reset_state(self) -> None:
        self._buffered = 0
        self._on = False
        self.last_probability = 0.0
        """Silero's most recent probability (for diagnostics)."""

    def reset(self) -> None:
        """Forget the stream (Silero's state, buffered samples, the hysteresis flag)."""
        self.silero.reset()
        self._reset_state()

    def is_speech(self, frame: np.ndarray) -> bool:
        voiced = bool(self.inner.is_speech(frame))  # validates the frame length
        samples = as_mono_float32(frame)
        if self._decimate > 1:
            samples = samples.reshape(-1, self._decimate).mean(axis=1)
        n = samples.shape[0]
        self._buf[self._buffered : self._buffered + n] = samples
        self._buffered += n
        if self._buffered >= CHUNK_SAMPLES:
            p = self.silero.probability(self._buf[:CHUNK_SAMPLES])
            self.last_probability = p
            if p >= self.threshold:
                self._on = True
            elif p < self.off_threshold:
                self._on = False
            rest = self._buffered - CHUNK_SAMPLES
            self._buf[:rest] = self._buf[CHUNK_SAMPLES : self._buffered]
            self._buffered = rest
        return voiced and self._on

    def speech_ratio(self, audio: np.ndarray) -> float:
        """Fraction of whole frames of ``audio`` judged speech, from a fresh stream state."""
        self.reset()
        samples = as_mono_float32(audio)
        n = samples.shape[0] // self.frame_samples
        if n == 0:
            return 0.0
        hits = sum(self.is_speech(samples[i * self.frame_samples : (i + 1) * self.frame_samples]) for i in range(n))
        self.reset()
        return hits / n
