"""STT adapter over faster-whisper (CTranslate2 Whisper), int8 on the CPU.

Vocabulary biasing: Whisper has no grammar, but it conditions on "previous text".
We put the vocabulary there, either as ``initial_prompt`` (``bias="prompt"``, the
default: measured on ../shared/speech it cut the command-word WER the most) or as
faster-whisper's ``hotwords`` (``bias="hotwords"``, the same mechanism with a
different position in the prompt). Both are plain text, so only a few dozen words
fit usefully; the vocabulary is truncated to ``max_vocabulary_words``.

List echo: with the vocabulary given as a comma-separated list, Whisper sometimes
continues the list instead of transcribing ("two" -> "turn, turn,"). When a prompt
was given, a word or two repeated with commas is collapsed to one and trailing commas
dropped (:func:`collapse_list_echo`). Measured on ../shared/speech (78 clips, default
vocabulary): biased errors 48 -> 44 of 571 words, command words 10 -> 7 of 20; the
same list without commas or with a "Commands:" label did worse or no better.

No-speech handling: Whisper hallucinates text ("Thank you.") on silence or noise.
Segments whose ``no_speech_prob`` exceeds ``no_speech_threshold`` while their
average log-probability is low are dropped, so silence yields an empty transcript.

Whisper encodes a fixed 30 s window, so a 1 s command costs about as much as a
10 s sentence (~0.35 s with tiny.en on 2 cores).

Threading: ``transcribe`` may be called from any thread, but CTranslate2 runs one
request at a time per model here (a lock), so two callers never fight for cores.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from edgevox.engines._util import as_mono_float32, require
from edgevox.engines.base import Transcript
from edgevox.errors import EngineError, ModelError

_BIAS_MODES = ("prompt", "hotwords", "none")
_LIST_ECHO = re.compile(r"\b(\w+(?:\s+\w+)?)(?:\s*,\s*\1\b)+", re.IGNORECASE)


def collapse_list_echo(text: str) -> str:
    """``"turn, turn,"`` -> ``"turn"``: a word (or two) repeated with commas, as Whisper writes
    when it continues a comma-separated prompt; other text is unchanged."""
    collapsed = _LIST_ECHO.sub(r"\1", text)
    if collapsed == text:
        return text
    return collapsed.strip().rstrip(",").strip()


class FasterWhisperSTT:
    """Whisper speech-to-text. ``model``: a model reference (see :func:`edgevox.models.resolve`)."""

    sample_rate_hz = 16000

    def __init__(
        self,
        model: str | Path = "whisper-tiny.en",
        *,
        cpu_threads: int = 2,
        compute_type: str = "int8",
        beam_size: int = 1,
        language: str = "en",
        bias: str = "prompt",
        max_vocabulary_words: int = 60,
        no_speech_threshold: float = 0.6,
        log_prob_threshold: float = -1.0,
    ) -> None:
        if beam_size < 1:
            raise ValueError(f"FasterWhisperSTT beam_size={beam_size}: must be >= 1")
        if bias not in _BIAS_MODES:
            raise ValueError(f"FasterWhisperSTT bias={bias!r}: must be one of {_BIAS_MODES}")
        fw = require("faster_whisper", package="faster-whisper", extra="stt", purpose="speech recognition")
        from edgevox.models import resolve

        self.model_path = resolve(model)
        self.beam_size = beam_size
        self.language = language
        self.bias = bias
        self.max_vocabulary_words = max_vocabulary_words
        self.no_speech_threshold = no_speech_threshold
        self.log_prob_threshold = log_prob_threshold
        self._lock = threading.Lock()
        try:
            self._model = fw.WhisperModel(
                str(self.model_path),
                device="cpu",
                compute_type=compute_type,
                cpu_threads=cpu_threads,
                local_files_only=True,
            )
        except Exception as exc:  # noqa: BLE001 - ctranslate2 raises bare RuntimeError/ValueError
            raise ModelError(f"cannot load Whisper model {self.model_path}: {exc}") from exc

    def bias_text(self, vocabulary: Sequence[str]) -> str:
        """The prompt text built from ``vocabulary`` (deduplicated, order kept, truncated)."""
        seen: dict[str, None] = {}
        for item in vocabulary:
            word = " ".join(str(item).replace("_", " ").split())
            if word and word.lower() not in (w.lower() for w in seen):
                seen[word] = None
        words = list(seen)[: self.max_vocabulary_words]
        return ", ".join(words) + "." if words else ""

    def transcribe(self, audio: np.ndarray, *, vocabulary: Sequence[str] = ()) -> Transcript:
        samples = as_mono_float32(audio)
        duration_s = samples.shape[0] / self.sample_rate_hz
        if samples.shape[0] == 0:
            return Transcript(text="", language=self.language, audio_duration_s=0.0)
        prompt = self.bias_text(vocabulary) if self.bias != "none" else ""
        kwargs: dict[str, Any] = {
            "language": self.language,
            "beam_size": self.beam_size,
            "vad_filter": False,  # the segmenter already cut the utterance
            "condition_on_previous_text": False,
            "without_timestamps": True,
            "no_speech_threshold": self.no_speech_threshold,
            "log_prob_threshold": self.log_prob_threshold,
            "temperature": 0.0,
        }
        if prompt and self.bias == "prompt":
            kwargs["initial_prompt"] = prompt
        elif prompt and self.bias == "hotwords":
            kwargs["hotwords"] = prompt
        with self._lock:
            try:
                segments_iter, _info = self._model.transcribe(samples, **kwargs)
                segments = list(segments_iter)  # decoding happens lazily while iterating
            except Exception as exc:  # noqa: BLE001 - surface as an engine error with context
                raise EngineError(f"faster-whisper failed on {duration_s:.2f} s of audio: {exc}") from exc
        kept = []
        for seg in segments:
            if seg.no_speech_prob > self.no_speech_threshold and seg.avg_logprob < self.log_prob_threshold:
                continue
            kept.append(
                {
                    "text": seg.text.strip(),
                    "start_s": float(seg.start),
                    "end_s": float(seg.end),
                    "avg_logprob": float(seg.avg_logprob),
                    "no_speech_prob": float(seg.no_speech_prob),
                }
            )
        text = " ".join(s["text"] for s in kept if s["text"]).strip()
        if prompt:
            text = collapse_list_echo(text)
        return Transcript(text=text, language=self.language, audio_duration_s=duration_s, segments=kept)
