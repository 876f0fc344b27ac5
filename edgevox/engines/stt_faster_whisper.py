"""STT adapter over faster-whisper (CTranslate2 Whisper): int8 on the CPU, float16 on CUDA.

(About 450 lines because the three ways this engine decodes, the short window, faster-whisper's
30 s path and the beam search the stop check reads, share one model, tokenizer and lock.)

Short window: Whisper was trained on 30 s windows and faster-whisper always pads the
log-Mel features to 30 s, so a 1 s command cost as much as a 25 s sentence (~0.4-0.7 s
with tiny.en on 2 cores). CTranslate2's encoder takes shorter inputs, so by default the
features are padded only to ``max(duration + window_pad_s, min_window_s)``, rounded up to
the window ladder below, and decoded with ``generate`` calls of our own. Without the padding margin the decoder loses the last word
or repeats itself; decoding *with* timestamps lets us drop text the model puts after
the end of the audio, where it tends to invent or repeat. Measured with
``edgevox eval stt`` on ../shared/speech (78 clips, tiny.en, 2 busy shared cores):
compute p50/p95 406/858 ms unbiased and 613/1328 ms biased, against 1466/2074 and
1544/2272 ms on the 30 s path; WER 7.9 % / 7.7 % (unbiased / biased) against
7.9 % / 7.5 %. With the vocabulary prompt a short window loops ("back, back, back" up
to the token limit; seen with the 53-word and 20-word lists, a sentence-form prompt,
without timestamps and with a repetition penalty), so a biased pass that repeats or
runs out of tokens is decoded again unbiased, and repeats left are collapsed.
Utterances longer than ``30 - window_pad_s`` (and all of them when ``min_window_s`` is
``None`` or >= 30) take faster-whisper's own 30 s path, which also seeks through audio
longer than 30 s.

Window ladder: the short window is the first of a few fixed lengths that holds the
utterance and its padding: from ``min_window_s`` up, each a quarter longer than the last, in
whole seconds (10, 13, 17, 22, 28 and 30 s by default). oneDNN, under CTranslate2, builds and
caches convolution primitives per encoder input shape (up to 1,024, never freed), so a window
that followed the utterance's exact length added memory with every new length: +54.1 MB over
30 new lengths in a fresh process, and most of a soak's growth (heaptrack on a running soak:
63 of the 64 MB still held after 13 minutes were CTranslate2's primitives). ``warmup``
transcribes silence once in every window of the ladder, so every shape is built before the first
turn: after the allocator's high-water marks for longer decodes (6-18 MB over the first
utterances), 30 new lengths add 0.02 MB. A 1 s grid would have 21
windows to warm (about 3 MB each); a quarter step pads an utterance by less than a quarter of
its window, which costs the encoder little (tiny.en: 20-55 ms for 10-22 s windows on 2 cores),
and the end-of-audio rule below drops anything read in the padding. Rejected: running faster-whisper with ``chunk_length`` < 30, which
re-pads the audio and reconfigures the shared feature extractor on every call.

Vocabulary biasing: Whisper has no grammar, but it conditions on "previous text".
We put the vocabulary there, either as the initial prompt (``bias="prompt"``, the
default: measured on ../shared/speech it cut the command-word WER the most) or as
faster-whisper's ``hotwords`` (``bias="hotwords"``, the same mechanism with a
different position in the prompt). Both are plain text, so only a few dozen words
fit usefully; the vocabulary is truncated to ``max_vocabulary_words``.

List echo: with the vocabulary given as a comma-separated list, Whisper sometimes
continues the list instead of transcribing ("two" -> "turn, turn,"), and in a short
window it repeats whole phrases ("What time is it? What time is it?"). A phrase of up
to 8 words repeated after a comma or sentence end is collapsed to one and trailing
commas dropped (:func:`collapse_list_echo`), on every transcript; a command said twice
on purpose comes out once. Measured on ../shared/speech (30 s path, 78 clips, default
vocabulary): biased errors 48 -> 44 of 571 words, command words 10 -> 7 of 20; the
same list without commas or with a "Commands:" label did worse or no better.

No-speech handling: Whisper hallucinates text ("Thank you.") on silence or noise.
A window (short path) or segment (30 s path) whose ``no_speech_prob`` exceeds
``no_speech_threshold`` while its average log-probability is below
``log_prob_threshold`` is dropped, so silence yields an empty transcript.

Device: ``device="auto"`` uses CUDA when CTranslate2 sees a CUDA device, else the CPU;
``compute_type="auto"`` is int8 on the CPU and float16 on CUDA. ``.device`` and
``.compute_type`` tell what was actually used.

Threading: ``transcribe`` may be called from any thread, but CTranslate2 runs one
request at a time per model here (a lock), so two callers never fight for cores.
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import numpy as np

from edgevox.engines._util import as_mono_float32, require
from edgevox.engines.base import Transcript
from edgevox.errors import EngineError, ModelError

# Defaults of FasterWhisperSTT, which the config schema (``stt:``) takes as its own.
SAMPLE_RATE_HZ: Final = 16000
"""Whisper's input rate, and so the speech pipeline's default rate (``audio.sample_rate_hz``)."""
DEFAULT_MODEL: Final = "whisper-tiny.en"
DEFAULT_CPU_THREADS: Final = 2
DEFAULT_NO_SPEECH_THRESHOLD: Final = 0.6
DEFAULT_MIN_WINDOW_S: Final = 10.0
DEFAULT_WINDOW_PAD_S: Final = 3.0

_BIAS_MODES = ("prompt", "hotwords", "none")
_DEVICES = ("auto", "cpu", "cuda")
_WORD = re.compile(r"\w")
# A phrase of up to 8 words said again right after a comma or sentence end: "back, back." or
# "What time is it? What time is it?".
_LIST_ECHO = re.compile(r"\b([\w']+(?:[\s,-]+[\w']+){0,7})(?:\s*[,.?!;]\s*\1\b)+", re.IGNORECASE)

FULL_WINDOW_S = 30.0
"""Whisper's training window; faster-whisper always pads to it."""
WINDOW_GROWTH: Final = 1.25
"""Each window of the ladder is this much longer than the last, rounded up to a whole second
(see "Window ladder" above)."""
_FRAMES_PER_S = 100  # log-Mel frames (hop 160 at 16 kHz)
_TIMESTAMP_S = 0.02  # one timestamp token step
_MAX_INITIAL_TIMESTAMP_INDEX = 50  # the first segment starts within 1 s, as in faster-whisper
_MIN_RESUME_TAIL_S = 0.5  # resume decoding only when at least this much audio is left
_MAX_WINDOWS = 4  # decoding passes per utterance (each resumes where the last stopped)
# Token budget per pass: read speech here is ~4.5 tokens/s with timestamps; a decoder
# caught in a loop stops at the budget instead of at Whisper's 448 tokens (~4 s of CPU).
_MIN_TOKENS = 16
_TOKENS_PER_S = 10


LOOP_RUN = 4
"""A word written this many times in a row in a short window is the decoder looping, not the
speaker ("five" came out as "F-E-E-E-E-E-E-" with ctranslate2 4.8 on this project's CI machine;
the 30 s path reads "five"). The 30 s path decodes it again; a speaker's "stop stop stop" only
costs that second decode."""


def _loops(text: str) -> bool:
    words = re.findall(r"[a-z0-9']+", text.lower())
    run = 1
    for a, b in zip(words, words[1:], strict=False):
        run = run + 1 if a == b else 1
        if run >= LOOP_RUN:
            return True
    return False


def collapse_list_echo(text: str) -> str:
    """``"turn, turn,"`` -> ``"turn"``, ``"Stop. Stop."`` -> ``"Stop."``: a phrase repeated after a
    comma or sentence end, as Whisper writes when it continues a comma-separated prompt or
    loops in a short window; other text (``"very very good"``, ``"one, two"``) is unchanged."""
    collapsed = _LIST_ECHO.sub(r"\1", text)
    if collapsed == text:
        return text
    return collapsed.strip().rstrip(",").strip()


def resolve_device(device: str = "auto", compute_type: str = "auto") -> tuple[str, str]:
    """The ``(device, compute_type)`` CTranslate2 will use; raises :class:`ModelError` when
    ``device="cuda"`` but CTranslate2 sees no CUDA device."""
    if device not in _DEVICES:
        raise ValueError(f"FasterWhisperSTT device={device!r}: must be one of {_DEVICES}")
    import ctranslate2

    try:
        cuda_devices = ctranslate2.get_cuda_device_count()
    except Exception:  # noqa: BLE001 - a CPU-only build or a broken driver counts as none
        cuda_devices = 0
    if device == "auto":
        device = "cuda" if cuda_devices > 0 else "cpu"
    elif device == "cuda" and cuda_devices == 0:
        raise ModelError(
            f"stt.device = cuda, but CTranslate2 {ctranslate2.__version__} sees no CUDA device: "
            "install the CUDA runtime (cuBLAS, cuDNN) and a CUDA build of ctranslate2, or set stt.device: cpu"
        )
    if compute_type == "auto":
        compute_type = "float16" if device == "cuda" else "int8"
    return device, compute_type


class FasterWhisperSTT:
    """Whisper speech-to-text. ``model``: a model reference (see :func:`edgevox.models.resolve`).

    ``min_window_s`` / ``window_pad_s``: the encoder window is the first of :attr:`windows_s`
    (a ladder from ``min_window_s``, rounded up to whole seconds) that holds
    ``duration + window_pad_s``; ``min_window_s=None`` (or >= 30) always uses faster-whisper's
    full 30 s window.
    """

    sample_rate_hz = SAMPLE_RATE_HZ

    def __init__(
        self,
        model: str | Path = DEFAULT_MODEL,
        *,
        cpu_threads: int = DEFAULT_CPU_THREADS,
        device: str = "auto",
        compute_type: str = "auto",
        beam_size: int = 1,
        language: str = "en",
        bias: str = "prompt",
        max_vocabulary_words: int = 60,
        no_speech_threshold: float = DEFAULT_NO_SPEECH_THRESHOLD,
        log_prob_threshold: float = -1.0,
        min_window_s: float | None = DEFAULT_MIN_WINDOW_S,
        window_pad_s: float = DEFAULT_WINDOW_PAD_S,
    ) -> None:
        if beam_size < 1:
            raise ValueError(f"FasterWhisperSTT beam_size={beam_size}: must be >= 1")
        if bias not in _BIAS_MODES:
            raise ValueError(f"FasterWhisperSTT bias={bias!r}: must be one of {_BIAS_MODES}")
        if min_window_s is not None and min_window_s < 0:
            raise ValueError(f"FasterWhisperSTT min_window_s={min_window_s}: must be >= 0 (or None: 30 s)")
        if not 0 <= window_pad_s < FULL_WINDOW_S:
            raise ValueError(f"FasterWhisperSTT window_pad_s={window_pad_s}: must be in [0, {FULL_WINDOW_S:g})")
        if device not in _DEVICES:
            raise ValueError(f"FasterWhisperSTT device={device!r}: must be one of {_DEVICES}")
        fw = require("faster_whisper", package="faster-whisper", extra="stt", purpose="speech recognition")
        from faster_whisper.tokenizer import Tokenizer
        from faster_whisper.transcribe import get_suppressed_tokens

        from edgevox.models import resolve

        self.model_path = resolve(model)
        self.device, self.compute_type = resolve_device(device, compute_type)
        self.beam_size = beam_size
        self.language = language
        self.bias = bias
        self.max_vocabulary_words = max_vocabulary_words
        self.no_speech_threshold = no_speech_threshold
        self.log_prob_threshold = log_prob_threshold
        self.min_window_s = min_window_s if min_window_s is not None and min_window_s < FULL_WINDOW_S else None
        self.window_pad_s = window_pad_s
        self.windows_s = _ladder(self.min_window_s, window_pad_s)
        """The encoder windows this engine uses, shortest first (``(30.0,)``: always the 30 s path)."""
        self._lock = threading.Lock()
        try:
            self._model = fw.WhisperModel(
                str(self.model_path),
                device=self.device,
                compute_type=self.compute_type,
                cpu_threads=cpu_threads,
                local_files_only=True,
            )
        except Exception as exc:  # noqa: BLE001 - ctranslate2 raises bare RuntimeError/ValueError
            raise ModelError(
                f"cannot load Whisper model {self.model_path} on {self.device} ({self.compute_type}): {exc}"
            ) from exc
        multilingual = self._model.model.is_multilingual
        self._tokenizer = Tokenizer(
            self._model.hf_tokenizer,
            multilingual,
            task="transcribe",
            language=language if multilingual else None,
        )
        self._suppress_tokens = list(get_suppressed_tokens(self._tokenizer, [-1]))

    @property
    def window_policy(self) -> str:
        """One line saying which window is used, for logs and ``edgevox eval stt``."""
        if self.min_window_s is None:
            return f"full {FULL_WINDOW_S:g} s window (faster-whisper)"
        return (
            f"short window: duration + {self.window_pad_s:g} s, rounded up to one of "
            f"{', '.join(f'{w:g}' for w in self.windows_s[:-1])} s; "
            f"full {FULL_WINDOW_S:g} s above {FULL_WINDOW_S - self.window_pad_s:g} s of audio"
        )

    def window_s(self, duration_s: float) -> float:
        """The encoder window for ``duration_s`` of audio: the first of :attr:`windows_s` that
        holds it and its padding (``FULL_WINDOW_S``: faster-whisper's path)."""
        needed = duration_s + self.window_pad_s
        return next((w for w in self.windows_s if w >= needed), FULL_WINDOW_S)

    def warmup(self) -> float:
        """Transcribe silence once in every window of :attr:`windows_s`, so no utterance pays
        CTranslate2's first-call allocations (~0.5 s on 2 cores) or adds memory later (the
        window ladder in the module docstring); returns seconds."""
        start = time.perf_counter()
        for window_s in self.windows_s:
            seconds = window_s - self.window_pad_s  # fills this window exactly (> 0: see _ladder)
            self.transcribe(np.zeros(int(seconds * self.sample_rate_hz), dtype=np.float32))
        return time.perf_counter() - start

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
        window_s = self.window_s(duration_s)
        with self._lock:
            try:
                segments = self._decode_window(samples, duration_s, prompt) if window_s < FULL_WINDOW_S else None
                if segments is None:
                    segments = self._decode_full(samples, prompt)
            except Exception as exc:  # noqa: BLE001 - surface as an engine error with context
                raise EngineError(f"faster-whisper failed on {duration_s:.2f} s of audio: {exc}") from exc
        # A segment without a word ("." on a cough) is not speech either.
        kept = [s for s in segments if _WORD.search(s["text"]) and not self._is_no_speech(s)]
        text = " ".join(s["text"] for s in kept).strip()
        text = collapse_list_echo(text)
        return Transcript(text=text, language=self.language, audio_duration_s=duration_s, segments=kept)

    def alternatives(self, audio: np.ndarray, n: int = 5) -> list[tuple[str, float]]:
        """Beam search with ``n`` beams over a short utterance (one window, no prompt, no
        timestamps): up to ``n`` (text, length-normalised log-probability), best first. The
        voice loop's stop check reads these for short utterances heard while the robot talks
        or acts (``edgevox.voice.stop_check``); empty for audio longer than one window."""
        samples = as_mono_float32(audio)
        duration_s = samples.shape[0] / self.sample_rate_hz
        window_s = self.window_s(duration_s)
        if samples.shape[0] == 0 or window_s >= FULL_WINDOW_S or n < 1:
            return []
        tok = self._tokenizer
        with self._lock:
            try:
                features = self._model.feature_extractor(samples)[..., :-1]
                frames = int(round(window_s * _FRAMES_PER_S))
                window = features[:, :frames]
                encoded = self._model.encode(np.pad(window, ((0, 0), (0, frames - window.shape[-1]))))
                prompt = self._model.get_prompt(tok, [], without_timestamps=True)
                result = self._model.model.generate(
                    encoded,
                    [prompt],
                    beam_size=n,
                    num_hypotheses=n,
                    max_length=min(self._model.max_length, len(prompt) + _MIN_TOKENS + int(_TOKENS_PER_S * duration_s)),
                    return_scores=True,
                    suppress_blank=True,
                    suppress_tokens=self._suppress_tokens,
                )[0]
            except Exception as exc:  # noqa: BLE001 - surface as an engine error with context
                raise EngineError(f"faster-whisper beam search failed on {duration_s:.2f} s of audio: {exc}") from exc
        return [
            (tok.decode(ids).strip(), float(score))
            for ids, score in zip(result.sequences_ids, result.scores, strict=True)
        ]

    def _is_no_speech(self, segment: dict[str, Any]) -> bool:
        return segment["no_speech_prob"] > self.no_speech_threshold and segment["avg_logprob"] < self.log_prob_threshold

    def _decode_window(self, samples: np.ndarray, duration_s: float, prompt: str) -> list[dict[str, Any]] | None:
        """``generate`` on features padded to :meth:`window_s`, with timestamps.

        When the decoder closes a segment and stops with audio left (it ends on a timestamp
        pair, as faster-whisper reads it), decoding resumes from that timestamp, as
        faster-whisper's 30 s path seeks; without this a 13 s sentence lost its last 3 s.
        A biased pass that repeats itself or runs out of tokens is decoded again unbiased; an
        unbiased pass that runs out of tokens returns ``None`` (use the 30 s path).
        """
        tok = self._tokenizer
        features = self._model.feature_extractor(samples)[..., :-1]  # the last frame is padding
        previous = tok.encode(" " + prompt.strip()) if prompt and self.bias == "prompt" else []
        hotwords = prompt if prompt and self.bias == "hotwords" else None
        plain_tokens = self._model.get_prompt(tok, [], without_timestamps=False)
        biased_tokens = self._model.get_prompt(tok, previous, without_timestamps=False, hotwords=hotwords)
        segments: list[dict[str, Any]] = []
        offset_s = 0.0
        for _ in range(_MAX_WINDOWS):
            first = int(round(offset_s * _FRAMES_PER_S))
            frames = int(round(self.window_s(duration_s - offset_s) * _FRAMES_PER_S))
            window = features[:, first : first + frames]
            encoded = self._model.encode(np.pad(window, ((0, 0), (0, frames - window.shape[-1]))))
            max_new = _MIN_TOKENS + int(_TOKENS_PER_S * (duration_s - offset_s))
            parts, resume_s, stats = self._generate(encoded, biased_tokens, max_new, duration_s - offset_s)
            if biased_tokens != plain_tokens and (stats["hit_limit"] or _LIST_ECHO.search(_text_of(parts))):
                parts, resume_s, stats = self._generate(encoded, plain_tokens, max_new, duration_s - offset_s)
            if stats["hit_limit"] or _loops(_text_of(parts)):
                return None  # looping even unbiased: let the 30 s path decode it
            for start_s, end_s, text in parts:
                if offset_s + start_s >= duration_s:
                    continue  # text after the end of the audio: invented in the padding
                segments.append(
                    {"text": text, "start_s": offset_s + start_s, "end_s": min(offset_s + end_s, duration_s)}
                    | {k: v for k, v in stats.items() if k != "hit_limit"}
                )
            if resume_s is None or resume_s <= 0 or offset_s + resume_s > duration_s - _MIN_RESUME_TAIL_S:
                break
            offset_s += resume_s
        return segments

    def _generate(
        self, encoded: Any, prompt_tokens: list[int], max_new: int, audio_s: float
    ) -> tuple[list[tuple[float, float, str]], float | None, dict[str, Any]]:
        tok = self._tokenizer
        result = self._model.model.generate(
            encoded,
            [prompt_tokens],
            beam_size=self.beam_size,
            max_length=min(self._model.max_length, len(prompt_tokens) + max_new),
            return_scores=True,
            return_no_speech_prob=True,
            suppress_blank=True,
            suppress_tokens=self._suppress_tokens,
            max_initial_timestamp_index=_MAX_INITIAL_TIMESTAMP_INDEX,
        )[0]
        tokens = result.sequences_ids[0]
        # As faster-whisper: the score is length-normalised (length_penalty 1); +1 for end-of-text.
        stats = {
            "avg_logprob": float(result.scores[0] * len(tokens) / (len(tokens) + 1)),
            "no_speech_prob": float(result.no_speech_prob),
            "hit_limit": len(tokens) >= max_new,
        }
        parts, resume_s = _split_at_timestamps(tokens, tok.timestamp_begin, tok.eot, audio_s)
        return [(start, end, tok.decode(ids).strip()) for start, end, ids in parts], resume_s, stats

    def _decode_full(self, samples: np.ndarray, prompt: str) -> list[dict[str, Any]]:
        """faster-whisper's own path: a 30 s window, seeking through longer audio."""
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
        segments_iter, _info = self._model.transcribe(samples, **kwargs)
        return [  # decoding happens lazily while iterating
            {
                "text": seg.text.strip(),
                "start_s": float(seg.start),
                "end_s": float(seg.end),
                "avg_logprob": float(seg.avg_logprob),
                "no_speech_prob": float(seg.no_speech_prob),
            }
            for seg in segments_iter
        ]


def _ladder(min_window_s: float | None, window_pad_s: float) -> tuple[float, ...]:
    """The short windows from ``min_window_s`` up (rounded up to a whole second, and longer than
    the padding alone), each :data:`WINDOW_GROWTH` times the last rounded up to a whole second,
    ending with the 30 s window."""
    if min_window_s is None:
        return (FULL_WINDOW_S,)
    windows = [float(max(math.ceil(min_window_s), math.floor(window_pad_s) + 1))]
    while windows[-1] < FULL_WINDOW_S:
        windows.append(min(FULL_WINDOW_S, float(math.ceil(windows[-1] * WINDOW_GROWTH))))
    return tuple(windows)


def _text_of(parts: Sequence[tuple[float, float, str]]) -> str:
    return " ".join(text for _, _, text in parts)


def _split_at_timestamps(
    tokens: Sequence[int], timestamp_begin: int, eot: int, end_s: float
) -> tuple[list[tuple[float, float, list[int]]], float | None]:
    """``<|0.00|> a b <|1.20|><|1.20|> c <|2.40|>`` -> ``[(0.0, 1.2, [a, b]), (1.2, 2.4, [c])]``, and
    where to resume: the last timestamp when the tokens end on a timestamp pair (the decoder
    stopped at a segment boundary, not at the end of speech), else ``None``.

    Text after the last timestamp (the decoder stopped mid-segment) ends at ``end_s``.
    """
    segments: list[tuple[float, float, list[int]]] = []
    start_s = 0.0
    text: list[int] = []
    for token in tokens:
        if token >= timestamp_begin:
            time_s = (token - timestamp_begin) * _TIMESTAMP_S
            if text:
                segments.append((start_s, time_s, text))
                text = []
            start_s = time_s
        elif token < eot:
            text.append(token)
    if text:
        segments.append((start_s, max(start_s, end_s), text))
    ends_on_pair = len(tokens) >= 2 and tokens[-1] >= timestamp_begin and tokens[-2] >= timestamp_begin
    return segments, (start_s if ends_on_pair else None)
