"""The latency bench's clips: recorded clips picked from a speech manifest, pause cases made of
real digit takes, and sentences synthesized with the app's voice when there is no manifest.

Which clips and why (the groups, the pause cases, the stop clip) is described in
:mod:`edgevox.cli.bench_latency`; this module only reads and cuts them. Every clip is 16 kHz
mono float32 (:data:`SAMPLE_RATE_HZ`), the rate :class:`edgevox.cli.bench_live.LiveMic` plays.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from edgevox.errors import ConfigError

DEFAULT_MANIFEST = Path(__file__).resolve().parents[3] / "shared" / "speech" / "MANIFEST.tsv"
COMMAND_CATEGORIES = ("command", "command_word", "command_sentence")
DIGIT_FILE = re.compile(r"(^|/)felix_(one|two|four|five)_\d+\.wav$")
READ_CATEGORY, READ_MIN_S, READ_MAX_S = "read_speech", 3.0, 10.0
GROUPS = ("command", "digit", "read")
"""Clip groups, in the order they take turns."""
PAUSE_CASES = ((("one", "two"), 400), (("four", "five"), 450), (("two", "four", "five"), 500))
"""Digit strings with a natural pause (ms) between the words."""
MIN_WORD_S = 0.15
"""A digit take is used for a pause case if the VAD hears this much speech in one run."""
SYNTHESIZED = ("go forward ten meters", "what time is it", "turn on the living room lamp", "four", "five")
SAMPLE_RATE_HZ = 16000


@dataclass
class Clip:
    name: str
    text: str
    """What was said."""
    group: str
    """``command``, ``digit``, ``read``, ``pause`` or ``synthesized``."""
    audio: np.ndarray
    """16 kHz mono float32."""


def group_of(row: dict[str, str]) -> str | None:
    """The clip group of a manifest row, or None if the bench does not use it."""
    category = row.get("category", "")
    if DIGIT_FILE.search(row["file"]):
        return "digit"
    if category in COMMAND_CATEGORIES:
        return "command"
    if category == READ_CATEGORY and READ_MIN_S <= float(row.get("duration_s") or 0) <= READ_MAX_S:
        return "read"
    return None


def select_rows(rows: list[dict[str, str]], limit: int, is_stop: Any = lambda text: False) -> list[dict[str, str]]:
    """``limit`` rows (0 = all) shared out in turn among :data:`GROUPS` (a group that runs out
    passes its turn), each group's share spread evenly over its rows in manifest order. Rows
    without a transcript, or whose transcript is a stop phrase, are skipped."""
    groups: dict[str, list[dict[str, str]]] = {g: [] for g in GROUPS}
    for row in rows:
        group = group_of(row)
        if group is not None and row.get("transcript") and not is_stop(row["transcript"]):
            groups[group].append(row)
    total = sum(len(g) for g in groups.values())
    want = total if limit <= 0 else min(limit, total)
    share = dict.fromkeys(GROUPS, 0)
    while sum(share.values()) < want:
        for g in GROUPS:
            if share[g] < len(groups[g]) and sum(share.values()) < want:
                share[g] += 1
    picked = {g: [groups[g][i * len(groups[g]) // share[g]] for i in range(share[g])] for g in GROUPS if share[g]}
    out: list[dict[str, str]] = []
    for i in range(max(share.values(), default=0)):  # interleaved, so the groups mix in time
        out += [picked[g][i] for g in GROUPS if i < share[g]]
    return out


def voiced_run(audio: np.ndarray, vad: Any) -> np.ndarray:
    """The longest run of frames ``vad`` calls speech (empty if none is)."""
    frame = vad.sample_rate_hz * vad.frame_ms // 1000
    best = (0, 0)
    start = None
    flags = [vad.is_speech(audio[i * frame : (i + 1) * frame]) for i in range(audio.shape[0] // frame)]
    for i, voiced in enumerate([*flags, False]):
        if voiced and start is None:
            start = i
        elif not voiced and start is not None:
            best = max(best, (i - start, start))
            start = None
    length, first = best
    return audio[first * frame : (first + length) * frame]


def pause_cases(rows: list[dict[str, str]], folder: Path, count: int, vad: Any) -> list[Clip]:
    """The first ``count`` of :data:`PAUSE_CASES`. Each word is the first take of it in which
    ``vad`` (the config's) hears at least :data:`MIN_WORD_S` of speech, cut to that voiced run,
    so the pause the loop sees is exactly the gap."""
    takes: dict[str, np.ndarray] = {}
    for row in rows if count else ():
        m = DIGIT_FILE.search(row["file"])
        if m and m.group(2) not in takes:
            word = voiced_run(_read16k(folder / row["file"]), vad)
            if word.shape[0] >= MIN_WORD_S * SAMPLE_RATE_HZ:
                takes[m.group(2)] = word
    out = []
    for words, gap_ms in PAUSE_CASES[:count]:
        if not all(w in takes for w in words):
            continue
        gap = np.zeros(SAMPLE_RATE_HZ * gap_ms // 1000, dtype=np.float32)
        audio = np.concatenate([part for w in words for part in (gap, takes[w])][1:])
        out.append(Clip(f"{' + '.join(words)} ({gap_ms} ms pauses)", " ".join(words), "pause", audio))
    return out


def load_clips(manifest: Path, limit: int, pauses: int, is_stop: Any, vad: Any) -> list[Clip]:
    with manifest.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    if rows and not {"file", "transcript"} <= set(rows[0]):
        raise ConfigError(f"{manifest}: needs the columns file, transcript (and category, duration_s)")
    if rows and "category" not in rows[0]:
        chosen = [r for r in rows if r.get("transcript")][: limit or None]
        clips = [Clip(r["file"], r["transcript"], "clip", _read16k(manifest.parent / r["file"])) for r in chosen]
    else:
        chosen = select_rows(rows, limit, is_stop)
        clips = [
            Clip(r["file"], r["transcript"], group_of(r) or "", _read16k(manifest.parent / r["file"])) for r in chosen
        ]
    return clips + pause_cases(rows, manifest.parent, pauses, vad)


def stop_clip(manifest: Path, is_stop: Any) -> np.ndarray | None:
    """The first command row whose transcript is a stop phrase (None if there is none)."""
    with manifest.open(newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if row.get("category", "command") in COMMAND_CATEGORIES and is_stop(row.get("transcript") or ""):
                return _read16k(manifest.parent / row["file"])
    return None


def synthesized_clips(tts: Any, limit: int) -> list[Clip]:
    from edgevox.engines.resample import resample

    out = []
    for text in SYNTHESIZED[: limit or None]:
        audio = resample(np.concatenate(list(tts.synthesize(text))), tts.sample_rate_hz, SAMPLE_RATE_HZ)
        out.append(Clip(f"synthesized {text!r}", text, "synthesized", audio))
    return out


def _read16k(path: Path) -> np.ndarray:
    from edgevox.engines.audio_wav import read_wav
    from edgevox.engines.resample import resample

    audio, rate = read_wav(path)
    return resample(audio, rate, SAMPLE_RATE_HZ)


def synthesized_stop(tts: Any) -> np.ndarray:
    from edgevox.engines.resample import resample

    # Padded with 0.2 s of silence on each side, as a recorded word is: Whisper drops a bare
    # half-second "Stop!" that starts on the first sample (no-speech gate) or hears "start."
    voice = resample(np.concatenate(list(tts.synthesize("Stop!"))), tts.sample_rate_hz, SAMPLE_RATE_HZ)
    pad = np.zeros(SAMPLE_RATE_HZ // 5, dtype=voice.dtype)
    return np.concatenate([pad, voice, pad])
