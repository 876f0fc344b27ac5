"""TTS adapter over Piper (``piper-tts`` >= 1.3: ``PiperVoice.synthesize`` yields ``AudioChunk``).

Piper phonemizes the text with its bundled espeak-ng, splits it into sentences and
runs one ONNX inference per sentence, so :meth:`PiperTTS.synthesize` yields one
float32 array per sentence at the voice's rate (22050 Hz for ``piper-joe-medium``).
The voice loop already feeds it one chunk (clause or sentence) at a time, so audio
can start playing after the first chunk while later ones are synthesised.

We build the ONNX session ourselves instead of ``PiperVoice.load`` (piper-tts 1.8.0
passes a default ``SessionOptions()`` and only a ``use_cuda`` flag, so its threads
cannot be set) to set the threading: ``num_threads`` intra-op threads (``"auto"``: 2,
1 on a single core; on an idle 2-core CPU the first chunk is synthesized ~30 % faster
than with one) *without spin-waiting*
(``spin=False``). onnxruntime's worker threads otherwise spin after every run and,
measured with SmolLM2 generating at the same time, cut the LLM from ~45 to ~1
token/s; without spinning two threads are still faster than one when alone, and
the LLM keeps ~17 tokens/s while a chunk is synthesized. The voice loop also pauses
the LLM while the first chunk is synthesized (``VoiceSettings.tts_priority_ms``).
Under contention two threads did not lose to one (3.0 s of speech, 2 cores shared with
other sessions' work, median of 3, same run as the LLM figures): 595 / 639 ms for 1 / 2
threads shared, 1222 / 910 ms with one more busy core; a second run 476 / 487 and
414 / 386 ms.

Level: Piper scales every sentence so its peak is exactly full scale
(``SynthesisConfig.normalize_audio``), so each sentence gets its own gain and every
reply has samples at +-1.0. We turn that off and apply one fixed gain to every
sentence (``gain_db``; ``tts.gain_db``), then a look-ahead peak limiter
(:mod:`edgevox.engines.limiter`; ``tts.limiter``) keeps peaks under -1 dBFS without
clipping. Piper multiplies by ``SynthesisConfig.volume`` and clips to +-1 before we
see the audio, so we ask it for the audio at -24 dB (:data:`_PIPER_VOLUME`, far from
its clip) and apply the rest of the gain here. Measured on ``piper-joe-medium``: raw
sentence peaks 0.51-0.71 (-3 to -6 dBFS), so at the default 0 dB the limiter rarely
acts; normalisation had scaled sentences by +2.9 to +5.8 dB each.

Memory: the session is built without onnxruntime's memory patterns
(``enable_mem_pattern = False``), and every run gives back the unused regions of its arena
when it ends (the run option ``memory.enable_memory_arena_shrinkage``). With patterns,
onnxruntime plans the buffers of a run for its input shapes, caches the plan and takes one
block of the plan's size from its arena; Piper's input is a new shape for nearly every
sentence (its phoneme count), so the arena kept extending: 300 random sentences of 2-40
words took the voice alone from 390 MB after 30 to 526 MB (+130 MB at once near the
100th). Without patterns the arena still keeps the largest sentence's working set for
ever, reached whenever a longer reply first comes (372 MB, and up to the chunker's
``max_chars``); shrinking after each run the voice stays at 208-214 MB whatever it said
before. Cost, measured side by side over the same sentences (2 cores shared): ~17 % more
synthesis time than keeping the arena (112.8 s against 96.5 s for 120 clauses; ~40 ms on a
250 ms sentence), against ~40 % without an arena at all. What the arena gives back goes to
glibc's heaps, which keep it resident and fragmented (the onnxruntime workers allocate in heaps
of their own): with one core busy, 100 sentences after warm-up still added 25-46 MB in 3 of 4
runs. So each run ends with ``malloc_trim(0)``, which returns free pages to the system: the
voice alone then measured 141 MB after warm-up (209 MB without it) and at most +3.8 MB over
200 more sentences, in 2 of 2 runs.

Device: ``device="auto"`` uses onnxruntime's CUDA provider when it is offered (the
``onnxruntime-gpu`` package), with the CPU provider behind it for operators CUDA
lacks; ``"cuda"`` without it is a :class:`ModelError`. :attr:`PiperTTS.device` is what
the session got (onnxruntime falls back to the CPU when CUDA cannot start), logged at
INFO with the threads when the voice loads.

Threading: ``synthesize`` may be called from any thread; a lock makes calls run one
at a time (onnxruntime sessions are thread-safe, but two concurrent syntheses would
just split the same cores).
"""

from __future__ import annotations

import ctypes
import json
import logging
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final

import numpy as np

from edgevox.engines._util import require
from edgevox.engines.device import GPU_DOCS, onnx_providers, onnx_providers_available, onnx_threads
from edgevox.engines.limiter import CEILING, db_to_gain, limit
from edgevox.errors import EngineError, ModelError

_log = logging.getLogger(__name__)

DEFAULT_VOICE: Final = "piper-joe-medium"
"""The embedded default voice; the config schema's ``tts.voice`` default."""

DEFAULT_GAIN_DB: Final = 0.0
"""Output gain in dB on the voice's own level (no per-sentence normalisation); ``tts.gain_db``."""

GAIN_DB_RANGE: Final = (-40.0, 20.0)
"""Accepted ``gain_db`` values (inclusive)."""

_PIPER_VOLUME: Final = 1 / 16
"""What Piper multiplies by before its clip to +-1 (-24 dB): raw peaks would have to be 16x
full scale to be clipped there; the rest of the gain is applied after synthesis."""


def _device_used(session: Any, wanted: str, asked: str) -> str:
    """onnxruntime falls back to the CPU (with a warning on stderr) when the CUDA provider
    is listed but cannot start (no CUDA runtime, no cuDNN); say so, and refuse when CUDA was
    asked for by name."""
    if wanted == "cpu" or "CUDAExecutionProvider" in session.get_providers():
        return wanted
    if asked == "cuda":
        raise ModelError(
            "tts.device = 'cuda', but onnxruntime could not start its CUDA provider (CUDA 12 and cuDNN 9 "
            f"libraries missing or not on the library path?): see {GPU_DOCS}, or set tts.device: cpu"
        )
    _log.warning("TTS: onnxruntime lists CUDA but could not start it; synthesizing on the CPU")
    return "cpu"


def _malloc_trim() -> Callable[[], object]:
    """glibc's ``malloc_trim(0)``, or a no-op where the C library has none (musl, macOS)."""
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return lambda: None
    trim.argtypes = [ctypes.c_size_t]
    return lambda: trim(0)


class _ShrinkingSession:
    """The ONNX session Piper calls, with every run told to give back the arena's unused
    regions when it ends (``memory.enable_memory_arena_shrinkage``), and the C library then
    told to return the pages they leave free (``malloc_trim``; see "Memory" above)."""

    def __init__(self, session: Any, ort: Any) -> None:
        self._session = session
        self._run_options = ort.RunOptions()
        self._run_options.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
        self._trim = _malloc_trim()

    def run(self, output_names: Any, input_feed: Any, run_options: Any = None) -> Any:
        try:
            return self._session.run(output_names, input_feed, run_options or self._run_options)
        finally:
            self._trim()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)


class PiperTTS:
    """Piper text-to-speech. ``model``: a reference to the ``.onnx`` voice (its ``.onnx.json`` beside it)."""

    def __init__(
        self,
        model: str | Path = DEFAULT_VOICE,
        *,
        num_threads: int | str = "auto",
        device: str = "auto",
        spin: bool = False,
        length_scale: float | None = None,
        speaker_id: int | None = None,
        gain_db: float = DEFAULT_GAIN_DB,
        limiter: bool = True,
        volume: float = 1.0,
        noise_scale: float | None = None,
        noise_w: float | None = None,
    ) -> None:
        lo, hi = GAIN_DB_RANGE
        for name, value in (("noise_scale", noise_scale), ("noise_w", noise_w)):
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 2
            ):
                raise ValueError(f"PiperTTS({name}={value!r}): must be a number from 0 to 2 (None: the voice's own)")
        if isinstance(gain_db, bool) or not isinstance(gain_db, (int, float)) or not lo <= gain_db <= hi:
            raise ValueError(f"PiperTTS(gain_db={gain_db!r}): must be a number of dB from {lo:g} to {hi:g}")
        # Piper's own linear `volume` (``tts.options: {volume: 0.5}`` in configs written before
        # tts.gain_db existed) still works: it multiplies the gain, before the limiter.
        if isinstance(volume, bool) or not isinstance(volume, (int, float)) or not 0.0 < volume <= 10.0:
            raise ValueError(f"PiperTTS(volume={volume!r}): must be a number above 0 and at most 10 (1 = unchanged)")
        num_threads = onnx_threads(num_threads)
        piper = require("piper", package="piper-tts", extra="tts", purpose="speech synthesis")
        ort = require("onnxruntime", package="onnxruntime", extra="tts", purpose="speech synthesis")
        wanted, providers = onnx_providers(device, onnx_providers_available(ort))
        from piper.config import PiperConfig, SynthesisConfig

        from edgevox.models import resolve

        self.model_path = resolve(model)
        config_path = Path(f"{self.model_path}.json")
        try:
            config = PiperConfig.from_dict(json.loads(config_path.read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError) as exc:
            raise ModelError(f"cannot read the Piper voice config {config_path}: {exc}") from exc
        options = ort.SessionOptions()
        options.intra_op_num_threads = num_threads
        options.inter_op_num_threads = 1
        # No memory patterns: onnxruntime plans one block per input shape and caches the plan,
        # and nearly every sentence is a new shape (its phoneme count), so the arena kept
        # growing (see "Memory" in the module docstring); _ShrinkingSession returns the rest.
        options.enable_mem_pattern = False
        if not spin:
            # Idle worker threads sleep instead of busy-waiting (they would starve the LLM).
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            options.add_session_config_entry("session.inter_op.allow_spinning", "0")
        try:
            session = ort.InferenceSession(str(self.model_path), sess_options=options, providers=providers)
        except Exception as exc:  # noqa: BLE001 - onnxruntime raises its own exception types
            raise ModelError(f"cannot load the Piper voice {self.model_path}: {exc}") from exc
        self.device = _device_used(session, wanted, device)
        """Where the voice runs: ``"cpu"`` or ``"cuda"`` (what the session got, not what was asked)."""
        self.num_threads = num_threads
        self._voice = piper.PiperVoice(session=_ShrinkingSession(session, ort), config=config)
        # Piper's noise (``noise_scale``: the voice, ``noise_w``: phoneme lengths) varies every
        # rendering of the same text; 0 renders it the same way each time.
        self._syn_config = SynthesisConfig(
            speaker_id=speaker_id,
            length_scale=length_scale,
            noise_scale=noise_scale,
            noise_w_scale=noise_w,
            normalize_audio=False,
            volume=_PIPER_VOLUME,
        )
        self.gain_db = float(gain_db)
        """Output gain in dB applied to every sentence alike."""
        self.limiter = bool(limiter)
        """Whether peaks are limited to -1 dBFS (else samples beyond full scale are clipped)."""
        self.volume = float(volume)
        """Piper's linear volume factor, applied with the gain (1.0: unchanged)."""
        self._gain = db_to_gain(self.gain_db) * self.volume / _PIPER_VOLUME
        self.sample_rate_hz = int(config.sample_rate)
        self._lock = threading.Lock()
        _log.info("TTS %s: %s", self.model_path.name, self.describe())

    def describe(self) -> str:
        """Device and threads in a few words, e.g. ``cpu, 2 threads``."""
        return self.device if self.device != "cpu" else f"cpu, {self.num_threads} threads"

    def warmup(self) -> None:
        """Synthesize a word once, so the first reply does not pay onnxruntime's first-run cost."""
        for _ in self.synthesize("Okay."):
            pass

    def _level(self, audio: np.ndarray) -> np.ndarray:
        """The fixed gain, then the limiter (or a clip to full scale without it)."""
        audio = audio * np.float32(self._gain)
        if self.limiter:
            return limit(audio, self.sample_rate_hz, ceiling=CEILING)
        return np.clip(audio, -1.0, 1.0)

    def synthesize(self, text: str) -> Iterator[np.ndarray]:
        """Yield float32 mono audio at :attr:`sample_rate_hz`, one array per sentence."""
        if not text or not text.strip():
            return
        with self._lock:
            try:
                for chunk in self._voice.synthesize(text, syn_config=self._syn_config):
                    audio = np.asarray(chunk.audio_float_array, dtype=np.float32).reshape(-1)
                    if audio.size:
                        yield self._level(audio)
            except (RuntimeError, ValueError) as exc:
                raise EngineError(f"Piper failed to synthesize {text[:60]!r}: {exc}") from exc
