"""TTS adapter over Piper (``piper-tts`` >= 1.3: ``PiperVoice.synthesize`` yields ``AudioChunk``).

Piper phonemizes the text with its bundled espeak-ng, splits it into sentences and
runs one ONNX inference per sentence, so :meth:`PiperTTS.synthesize` yields one
float32 array per sentence at the voice's rate (22050 Hz for ``piper-joe-medium``).
The voice loop already feeds it one chunk (clause or sentence) at a time, so audio
can start playing after the first chunk while later ones are synthesised.

We build the ONNX session ourselves instead of ``PiperVoice.load`` to set the
threading: ``num_threads`` intra-op threads (default 2: on a 2-core CPU the first
chunk is synthesized ~30 % faster than with one) *without spin-waiting*
(``spin=False``). onnxruntime's worker threads otherwise spin after every run and,
measured with SmolLM2 generating at the same time, cut the LLM from ~45 to ~1
token/s; without spinning two threads are still faster than one when alone, and
the LLM keeps ~17 tokens/s while a chunk is synthesized. The voice loop also pauses
the LLM while the first chunk is synthesized (``VoiceSettings.tts_priority_ms``).

Threading: ``synthesize`` may be called from any thread; a lock makes calls run one
at a time (onnxruntime sessions are thread-safe, but two concurrent syntheses would
just split the same cores).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from edgevox.engines._util import require
from edgevox.errors import EngineError, ModelError


class PiperTTS:
    """Piper text-to-speech. ``model``: a reference to the ``.onnx`` voice (its ``.onnx.json`` beside it)."""

    def __init__(
        self,
        model: str | Path = "piper-joe-medium",
        *,
        num_threads: int = 2,
        spin: bool = False,
        length_scale: float | None = None,
        volume: float = 1.0,
        speaker_id: int | None = None,
    ) -> None:
        if num_threads < 1:
            raise ValueError(f"PiperTTS num_threads = {num_threads}: must be >= 1")
        piper = require("piper", package="piper-tts", extra="tts", purpose="speech synthesis")
        ort = require("onnxruntime", package="onnxruntime", extra="tts", purpose="speech synthesis")
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
        if not spin:
            # Idle worker threads sleep instead of busy-waiting (they would starve the LLM).
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            options.add_session_config_entry("session.inter_op.allow_spinning", "0")
        try:
            session = ort.InferenceSession(
                str(self.model_path), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # noqa: BLE001 - onnxruntime raises its own exception types
            raise ModelError(f"cannot load the Piper voice {self.model_path}: {exc}") from exc
        self._voice = piper.PiperVoice(session=session, config=config)
        self._syn_config = SynthesisConfig(speaker_id=speaker_id, length_scale=length_scale, volume=volume)
        self.sample_rate_hz = int(config.sample_rate)
        self._lock = threading.Lock()

    def synthesize(self, text: str) -> Iterator[np.ndarray]:
        """Yield float32 mono audio at :attr:`sample_rate_hz`, one array per sentence."""
        if not text or not text.strip():
            return
        with self._lock:
            try:
                for chunk in self._voice.synthesize(text, syn_config=self._syn_config):
                    audio = np.asarray(chunk.audio_float_array, dtype=np.float32).reshape(-1)
                    if audio.size:
                        yield audio
            except (RuntimeError, ValueError) as exc:
                raise EngineError(f"Piper failed to synthesize {text[:60]!r}: {exc}") from exc
