"""``edgevox eval endpoint [MANIFEST]``: does the endpoint split utterances at natural pauses?

Every clip of the manifest (default ``../shared/speech/MANIFEST.tsv``) is played, frame by
frame and as fast as possible, through a real VAD (webrtcvad, and webrtcvad confirmed by
Silero) and the :class:`~edgevox.voice.segmenter.Segmenter`, under several endpoint
settings: fixed silences and adaptive endpointing. With adaptive endpointing, every
:class:`~edgevox.voice.segmenter.SegmentPause` is transcribed with the real default STT and
hinted with :func:`~edgevox.voice.endpoint.ends_mid_phrase`, as if the hint arrived at once
(so the delays printed are lower bounds: in the loop, STT time on the pause adds to them
when it exceeds ``end_silence_ms - pause_ms``).

Counted per setting: clips split (more than one utterance where the manifest has one),
clips missed (no utterance in a clip with a transcript), utterances on clips without
speech (categories ``negative_no_speech`` and ``noise_only``), and the endpoint delay
(end of the last voiced frame to the frame that ended the utterance). Clips without a
transcript in other categories (out-of-vocabulary speech, far-field recordings) count
only towards the delay.

Three harder cases are built in memory from real clips, since the point is never to
split at a natural pause: two and three felix digit words 450 ms apart (a spoken digit
string), and two sentences whose comma pause is stretched to 500 ms.

Findings on ../shared/speech (see :mod:`edgevox.voice.segmenter` for the table): Silero
confirmation removes the utterances on noise and the splits of command clips, but adds
splits in read speech (its probability dips between words); adaptive endpointing fixes the
digit strings but not the comma pauses, because Whisper ends the partial transcript with a
period. The felix "two" (commands/felix_two_0.wav) is missed with Silero (p < 0.5 on most
chunks), and tiny.en hears the felix "one" as "What?", so "one two four" still splits.
"""

from __future__ import annotations

import argparse
import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from edgevox.cli.eval_cmd import load_manifest, register_evaluation
from edgevox.engines.stt_faster_whisper import SAMPLE_RATE_HZ
from edgevox.engines.vad_webrtc import DEFAULT_FRAME_MS
from edgevox.voice.endpoint import Ending, classify_ending
from edgevox.voice.latency import percentile
from edgevox.voice.segmenter import SegmentEnd, Segmenter, SegmenterSettings, SegmentPause

if TYPE_CHECKING:
    from edgevox.engines.base import STT
    from edgevox.engines.vad_silero import ConfirmedVAD
    from edgevox.engines.vad_webrtc import WebRtcVAD

    FramedVAD = WebRtcVAD | ConfirmedVAD
    """A VAD that knows its frame length in samples (``frame_samples``)."""

DEFAULT_MANIFEST = Path(__file__).resolve().parents[3] / "shared" / "speech" / "MANIFEST.tsv"
NO_SPEECH_CATEGORIES = ("negative_no_speech", "noise_only")
RATE_HZ = SAMPLE_RATE_HZ
"""The speech pipeline's default rate (``audio.sample_rate_hz``)."""
FRAME_MS = DEFAULT_FRAME_MS
"""The default VAD frame (``vad.frame_ms``)."""

SETTINGS: dict[str, SegmenterSettings] = {
    "fixed 300": SegmenterSettings(frame_ms=FRAME_MS, end_silence_ms=300),
    "fixed 250": SegmenterSettings(frame_ms=FRAME_MS, end_silence_ms=250),
    "adaptive 250/800": SegmenterSettings(frame_ms=FRAME_MS, end_silence_ms=250, hold_silence_ms=800),
    "adaptive 250/500/800": SegmenterSettings(
        frame_ms=FRAME_MS, end_silence_ms=250, statement_silence_ms=500, hold_silence_ms=800
    ),
    "adaptive 250/650/800": SegmenterSettings(
        frame_ms=FRAME_MS, end_silence_ms=250, statement_silence_ms=650, hold_silence_ms=800
    ),
}


@dataclass(frozen=True)
class Stream:
    """One input: ``expected`` utterances (1 speech, 0 no speech, None unknown)."""

    name: str
    audio: np.ndarray
    expected: int | None
    hard: bool = False
    """Built in memory to contain a natural pause (a digit string, a comma)."""


@dataclass
class Tally:
    streams: int = 0
    split: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)
    noise_utterances: int = 0
    hard_split: list[str] = field(default_factory=list)
    delays_ms: list[float] = field(default_factory=list)


def frame_voicing(vad: FramedVAD, audio: np.ndarray) -> list[bool]:
    """VAD decision per whole frame, from a fresh stream state."""
    if hasattr(vad, "reset"):
        vad.reset()
    n = audio.shape[0] // vad.frame_samples
    return [bool(vad.is_speech(audio[i * vad.frame_samples : (i + 1) * vad.frame_samples])) for i in range(n)]


def segment(
    audio: np.ndarray, voiced: Sequence[bool], settings: SegmenterSettings, hint: Callable[[np.ndarray], Ending] | None
) -> tuple[int, list[float]]:
    """(utterances, endpoint delays in ms) of one stream; ``hint(pause_audio) -> Ending``."""
    seg = Segmenter(settings, RATE_HZ)
    frame_samples = seg.frame_samples
    utterances, delays = 0, []
    for i, is_voiced in enumerate(voiced):
        end_time = (i + 1) * settings.frame_ms / 1000
        event = seg.process(audio[i * frame_samples : (i + 1) * frame_samples], is_voiced, end_time)
        if isinstance(event, SegmentPause) and hint is not None:
            ending = hint(event.audio)
            seg.hint(event.audio.shape[0], ending.complete, statement=ending.statement)
        elif isinstance(event, SegmentEnd):
            utterances += 1
            if not event.truncated:
                delays.append((end_time - event.last_voiced_at) * 1000)
    if seg.flush() is not None:
        utterances += 1
    return utterances, delays


class PauseHinter:
    """``Ending`` of a pause's audio with the real STT, cached by audio content (shared across runs)."""

    def __init__(self, stt: STT) -> None:
        self.stt = stt
        self.calls = 0
        self.seconds = 0.0
        self._cache: dict[bytes, Ending] = {}
        self.texts: list[tuple[str, Ending]] = []

    def __call__(self, audio: np.ndarray) -> Ending:
        key = hashlib.blake2b(audio.tobytes(), digest_size=16).digest()
        if key not in self._cache:
            start = time.perf_counter()
            text = self.stt.transcribe(audio).text
            self.seconds += time.perf_counter() - start
            self.calls += 1
            self._cache[key] = classify_ending(text)
            self.texts.append((text, self._cache[key]))
        return self._cache[key]


def evaluate(
    streams: Sequence[Stream], vad: FramedVAD, settings: dict[str, SegmenterSettings], hinter: PauseHinter
) -> dict[str, Tally]:
    """``{setting name: Tally}`` for one VAD."""
    tallies = {name: Tally() for name in settings}
    for stream in streams:
        voiced = frame_voicing(vad, stream.audio)
        for name, s in settings.items():
            count, delays = segment(stream.audio, voiced, s, hinter if s.hold_silence_ms else None)
            t = tallies[name]
            t.streams += 1
            t.delays_ms += delays
            if stream.expected == 1 and count > 1:
                (t.hard_split if stream.hard else t.split).append(f"{stream.name} ({count})")
            if stream.expected == 1 and count == 0:
                t.missed.append(stream.name)
            if stream.expected == 0:
                t.noise_utterances += count
    return tallies


# --- streams -------------------------------------------------------------------------------------


def _speech_extent(audio: np.ndarray, pad_ms: int = 32) -> tuple[int, int]:
    """(first, last) sample of the speech in a clip: Silero chunks with p >= 0.5, padded.

    Not the loud part: the felix clips carry room noise around the word, and a gap
    "450 ms apart" must be 450 ms between the words, not between their noise tails."""
    from edgevox.engines.vad_silero import CHUNK_SAMPLES, SileroVAD

    silero = SileroVAD()
    n = audio.shape[0] // CHUNK_SAMPLES
    probs = [silero.probability(audio[i * CHUNK_SAMPLES : (i + 1) * CHUNK_SAMPLES]) for i in range(n)]
    speech = np.flatnonzero(np.asarray(probs) >= 0.5)
    if speech.size == 0:
        raise ValueError("no speech in a clip meant for a hard case")
    pad = pad_ms * RATE_HZ // 1000
    return max(0, speech[0] * CHUNK_SAMPLES - pad), min(audio.shape[0], (speech[-1] + 1) * CHUNK_SAMPLES + pad)


def _room(ms: int, level: float, seed: int) -> np.ndarray:
    """Quiet background (not digital zeros) for the inserted pauses."""
    return (np.random.default_rng(seed).standard_normal(ms * RATE_HZ // 1000) * level).astype(np.float32)


def join_words(clips: Sequence[np.ndarray], gap_ms: int) -> np.ndarray:
    """Words trimmed to their loud part, ``gap_ms`` apart, with 300 ms of quiet before and after."""
    words = [c[slice(*_speech_extent(c))] for c in clips]
    level = 1e-3
    parts: list[np.ndarray] = [_room(300, level, 0)]
    for i, w in enumerate(words):
        if i:
            parts.append(_room(gap_ms, level, i))
        parts.append(w)
    parts.append(_room(300, level, 99))
    return np.concatenate(parts).astype(np.float32)


def stretch_longest_pause(audio: np.ndarray, vad: FramedVAD, to_ms: int) -> np.ndarray:
    """Lengthen the longest run of unvoiced frames inside the speech to ``to_ms`` (a comma pause)."""
    voiced = frame_voicing(vad, audio)
    first, last = voiced.index(True), len(voiced) - 1 - voiced[::-1].index(True)
    best, run_start = (0, 0), None
    for i in range(first, last + 1):
        if not voiced[i] and run_start is None:
            run_start = i
        elif voiced[i] and run_start is not None:
            best = max(best, (i - run_start, run_start))
            run_start = None
    length, start = best
    if length == 0:
        return audio
    fs = vad.frame_samples
    middle = (start + length // 2) * fs
    extra = to_ms * RATE_HZ // 1000 - length * fs
    if extra <= 0:
        return audio
    level = float(np.sqrt(np.mean(audio[start * fs : (start + length) * fs] ** 2)))
    return np.concatenate([audio[:middle], _room(extra * 1000 // RATE_HZ, level, 7), audio[middle:]]).astype(np.float32)


def hard_cases(speech_dir: Path, vad: FramedVAD) -> list[Stream]:
    from edgevox.engines.audio_wav import read_wav

    def clip(name: str) -> np.ndarray:
        audio, rate = read_wav(speech_dir / name)
        if rate != RATE_HZ:
            raise ValueError(f"{name}: {rate} Hz, expected {RATE_HZ}")
        return audio

    digits = "commands/felix_{}.wav"
    return [
        Stream(
            "digits 'five five' 450 ms apart",
            join_words([clip(digits.format("five_0")), clip(digits.format("five_2"))], 450),
            1,
            hard=True,
        ),
        Stream(
            "digits 'one two four' 450 ms apart",
            join_words([clip(digits.format(d)) for d in ("one_0", "two_0", "four_0")], 450),
            1,
            hard=True,
        ),
        Stream(
            "jfk, comma pause stretched to 500 ms",
            stretch_longest_pause(clip("classic/jfk.wav"), vad, 500),
            1,
            hard=True,
        ),
        Stream(
            "LJ001-0001, comma pause stretched to 500 ms",
            stretch_longest_pause(clip("ljspeech/LJ001-0001.wav"), vad, 500),
            1,
            hard=True,
        ),
    ]


def manifest_streams(manifest: Path, categories: Sequence[str] = ()) -> list[Stream]:
    from edgevox.engines.audio_wav import read_wav

    streams = []
    for c in load_manifest(manifest, categories):
        audio, rate = read_wav(c.path)
        if rate != RATE_HZ:
            continue
        if c.transcript:
            expected: int | None = 1
        else:
            expected = 0 if c.category in NO_SPEECH_CATEGORIES else None
        streams.append(Stream(str(c.path.relative_to(manifest.parent)), audio, expected))
    return streams


# --- command -------------------------------------------------------------------------------------


def _percentile(values: list[float], q: float) -> float:
    return percentile(values, q) if values else float("nan")


def register_endpoint(eval_sub: Any) -> None:
    p = eval_sub.add_parser("endpoint", help="utterances split at natural pauses, and endpoint delay, per setting")
    p.add_argument("manifest", nargs="?", default=str(DEFAULT_MANIFEST), help=f"default: {DEFAULT_MANIFEST}")
    p.add_argument("--category", action="append", default=[], help="only this category (repeatable)")
    p.add_argument("--hold-ms", type=int, default=800, help="hold_silence_ms of the adaptive setting (default 800)")
    p.add_argument("--show", action="store_true", help="print each speculative transcript and its hint")
    p.set_defaults(func=run_eval_endpoint)


register_evaluation(register_endpoint)


def run_eval_endpoint(args: argparse.Namespace) -> int:
    from edgevox.config.build import make_stt
    from edgevox.config.schema import STTConfig
    from edgevox.engines.vad_silero import ConfirmedVAD, SileroVAD
    from edgevox.engines.vad_webrtc import WebRtcVAD

    manifest = Path(args.manifest)
    settings = dict(SETTINGS)
    if args.hold_ms != 800:
        settings[f"adaptive 250/{args.hold_ms}"] = replace(
            settings.pop("adaptive 250/800"), hold_silence_ms=args.hold_ms
        )
    stt = make_stt(STTConfig())
    hinter = PauseHinter(stt)
    vads: dict[str, FramedVAD] = {
        "webrtc": WebRtcVAD(sample_rate_hz=RATE_HZ, frame_ms=FRAME_MS),
        "webrtc+silero": ConfirmedVAD(WebRtcVAD(sample_rate_hz=RATE_HZ, frame_ms=FRAME_MS), SileroVAD()),
    }
    streams = manifest_streams(manifest, args.category)
    streams += hard_cases(manifest.parent, vads["webrtc"])
    n_speech = sum(s.expected == 1 and not s.hard for s in streams)
    n_noise = sum(s.expected == 0 for s in streams)
    n_hard = sum(s.hard for s in streams)
    print(f"{manifest}: {len(streams)} streams ({n_speech} speech, {n_noise} without speech, {n_hard} hard cases)")
    for vad_name, vad in vads.items():
        start = time.perf_counter()
        frames = sum(s.audio.shape[0] // vad.frame_samples for s in streams)
        tallies = evaluate(streams, vad, settings, hinter)
        elapsed = time.perf_counter() - start
        print(f"\nVAD {vad_name} ({frames} frames of {FRAME_MS} ms)")
        print(
            f"  {'setting':18s} {'split':>6s} {'missed':>6s} {'noise utt':>9s} {'hard split':>10s}   delay ms p50/p95/max"
        )
        for name, t in tallies.items():
            d = t.delays_ms
            print(
                f"  {name:18s} {len(t.split):6d} {len(t.missed):6d} {t.noise_utterances:9d} "
                f"{len(t.hard_split):6d}/{n_hard:<3d}   "
                f"{_percentile(d, 50):.0f} / {_percentile(d, 95):.0f} / {max(d) if d else float('nan'):.0f}"
            )
            for what, names in (("split", t.split), ("missed", t.missed), ("hard split", t.hard_split)):
                if names:
                    print(f"      {what}: {', '.join(names)}")
        print(f"  ({elapsed:.1f} s including STT)")
    per_frame_ms = _vad_cost_ms(vads["webrtc+silero"], streams)
    print(f"\nwebrtc+silero VAD cost: {per_frame_ms:.3f} ms per {FRAME_MS} ms frame")
    print(f"STT on pauses: {hinter.calls} transcriptions, {hinter.seconds / max(1, hinter.calls) * 1000:.0f} ms each")
    if args.show:
        for text, ending in hinter.texts:
            print(f"  {ending.reason:<20} {text!r}")
    return 0


def _vad_cost_ms(vad: FramedVAD, streams: Sequence[Stream]) -> float:
    frames = 0
    start = time.perf_counter()
    for s in streams[:20]:
        frames += len(frame_voicing(vad, s.audio))
    return (time.perf_counter() - start) / max(1, frames) * 1000
