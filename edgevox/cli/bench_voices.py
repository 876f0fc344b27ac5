"""The voices ``edgevox bench spoken-stop`` speaks with: the embedded Piper voice at three rates,
each also shifted in pitch and tempo, espeak-ng's voices when it is installed, and the real
recordings under ``../shared/speech`` (MANIFEST.tsv). Every clip is 16 kHz mono, peak 1, with
the time its voice ends (the benchmark's latency runs from there)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

RATE_HZ = 16000


@dataclass
class Clip:
    text: str
    voice: str
    audio: np.ndarray
    """16 kHz mono float32, peak 1."""
    voiced_end_s: float


def _voiced_end(audio: np.ndarray) -> float:
    loud = np.flatnonzero(np.abs(audio) > 0.05 * float(np.max(np.abs(audio)) or 1.0))
    return (int(loud[-1]) + 1) / RATE_HZ if loud.size else 0.0


def _clip(text: str, voice: str, audio: np.ndarray) -> Clip:
    audio = np.asarray(audio, dtype=np.float32)
    peak = float(np.max(np.abs(audio))) or 1.0
    audio = audio / peak
    return Clip(text, voice, audio, _voiced_end(audio))


def piper_voices(texts: tuple[str, ...]) -> list[Clip]:
    """The embedded Piper voice at three rates, each also +-8 % in pitch and tempo."""
    from edgevox.config.build import make_tts
    from edgevox.config.schema import TTSConfig
    from edgevox.engines.resample import resample

    clips: list[Clip] = []
    for scale in (0.85, 1.0, 1.2):
        tts = make_tts(TTSConfig(length_scale=scale))
        for text in texts:
            audio = resample(np.concatenate(list(tts.synthesize(text))), tts.sample_rate_hz, RATE_HZ)
            clips.append(_clip(text, f"piper x{scale}", audio))
            for shift in (0.92, 1.08):  # played at another rate: a lower / higher voice
                clips.append(
                    _clip(text, f"piper x{scale} pitch {shift}", resample(audio, RATE_HZ, round(RATE_HZ / shift)))
                )
    return clips


def espeak_voices(texts: tuple[str, ...]) -> list[Clip]:
    """espeak-ng's English voices (formant synthesis: nothing like Piper), when installed."""
    exe = shutil.which("espeak-ng")
    if exe is None:
        return []
    from edgevox.engines.audio_wav import read_wav
    from edgevox.engines.resample import resample

    clips: list[Clip] = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "say.wav"
        for voice in ("en-us", "en-us+f3", "en+m3", "en-gb+f4"):
            for text in texts:
                subprocess.run([exe, "-v", voice, "-w", str(path), text], check=True, capture_output=True)
                audio, rate = read_wav(path)
                clips.append(_clip(text, f"espeak {voice}", resample(audio, rate, RATE_HZ)))
    return clips


def recorded_voices(speech: Path, is_stop: Any) -> tuple[list[Clip], list[Clip]]:
    """Recordings under ``speech`` (MANIFEST.tsv): (stops, short others), each at most 2 s."""
    from edgevox.engines.audio_wav import read_wav
    from edgevox.engines.resample import resample

    manifest = speech / "MANIFEST.tsv"
    stops: list[Clip] = []
    others: list[Clip] = []
    if not manifest.is_file():
        return stops, others
    for line in manifest.read_text().splitlines()[1:]:
        cols = line.split("\t")
        if len(cols) < 4 or cols[3] not in ("command_word", "derived_noisy_mix", "command") or float(cols[1]) > 2.0:
            continue
        audio, rate = read_wav(speech / cols[0])
        clip = _clip(cols[2], f"recording {cols[0]}", resample(audio, rate, RATE_HZ))
        (stops if is_stop(cols[2]) else others).append(clip)
    return stops, others
