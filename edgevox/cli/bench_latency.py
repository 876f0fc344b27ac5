"""``edgevox bench latency [MANIFEST.tsv]``: end-to-end voice latency of the application itself.

The bench builds the application from a config (``default`` unless ``--config``) the way
``edgevox run default`` does - ``load_config`` then :meth:`edgevox.app.App.build` - and
replaces only the two devices: the microphone by a :class:`LiveMic` that plays clips in
real time (20 ms blocks, paced by the clock) and the speaker by a real-time ``NullOut``.
What is measured is therefore the product's loop: its VAD, endpointing, STT, agent and
memory, chunker, TTS and settings. Per turn the latency observer records the user's last
voiced frame -> transcript -> first token -> first chunk -> first audio out. Also:

* turns against clips: an utterance cut in two by endpointing is SPLIT, two clips heard
  as one turn are MERGED (from ``SpeechStarted``/``SpeechEnded`` inside each clip's
  window), so a latency gained by cutting users off shows up;
* a naive baseline on the same clips (endpointing silence, then transcribe, then the
  whole reply, then the whole speech) and its ratio to the loop;
* barge-in: speech over the reply, time to ``AudioOut.clear()`` (target <= 150 ms), on
  the same config with ``voice.echo_guard: off`` (half-duplex ignores speech over the
  reply, so there is no barge-in to time);
* safety stop: "stop" spoken during a reply with the config's echo guard; time from its
  transcript to every cancellation being issued (target <= 100 ms) and to the turn's end;
* ``--load N``: N busy-loop processes run during the measured part; ``--compare-load``
  measures idle, then loaded, in one run and prints the loaded/idle ratio.

Clips: from the manifest (columns ``file``, ``duration_s``, ``transcript``, ``category``),
``--clips`` of them shared out in turn among short commands, spoken digits and read
sentences of 3-10 s, each group's share spread evenly over its rows (fixed, not picked by
hand), plus ``--pauses`` digit strings made of two or three real digit clips with a
400-500 ms pause between words, where endpointing cuts people off. Without a manifest a
few sentences are synthesized with the app's voice. Every clip is followed by silence
until the reply has played. The barge-in and stop trials run once, under the first
measured condition.

Rejected: wiring engines and a ``VoiceLoop`` by hand (what this bench did before). It
measured settings and an agent the product does not use, and drifted from it.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import resource
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from edgevox.cli.args import COUNT, whole
from edgevox.errors import ConfigError

if TYPE_CHECKING:
    from edgevox.config.build import LoadedEngines

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
TARGETS_S = {"idle": {"p50": 0.5, "p95": 0.8}, "loaded": {"p50": 0.7}}
"""speech_end->first_audio targets per condition."""
TRIAL_TARGETS_S = {"barge_in_audio_stop": 0.15, "stop_cancel": 0.1}
BUSY_LOOP = "import os, sys\nwhile os.getppid() == int(sys.argv[1]):\n    for _ in range(1000000):\n        pass\n"
"""A busy process (``python -c BUSY_LOOP BENCH_PID``) that ends when the bench dies, even by SIGKILL:
it is then reparented. The bench's pid is given, not read at start, which may already be too late."""
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


# --- the microphone -----------------------------------------------------------------------------


@dataclass
class Playback:
    """One clip played by :class:`LiveMic`: wall-clock times of its first and last sample."""

    samples: int
    started_at: float = 0.0
    ended_at: float = 0.0
    done: threading.Event = field(default_factory=threading.Event)


class LiveMic:
    """A real-time microphone: silence, plus whatever :meth:`play` queues, paced by the clock.

    ``read`` runs on the voice loop's capture thread; ``play`` on the bench's.
    """

    def __init__(self, sample_rate_hz: int = SAMPLE_RATE_HZ, block_ms: int = 20) -> None:
        self.sample_rate_hz = sample_rate_hz
        self.block = sample_rate_hz * block_ms // 1000
        self._pending: deque[tuple[np.ndarray, Playback, bool, bool]] = deque()
        self._lock = threading.Lock()
        self._start = 0.0
        self._k = 0
        self._stopped = threading.Event()

    def play(self, audio: np.ndarray) -> Playback:
        playback = Playback(samples=audio.shape[0])
        starts = range(0, max(audio.shape[0], 1), self.block)
        with self._lock:
            for n, i in enumerate(starts):
                part = audio[i : i + self.block].astype(np.float32)
                if part.shape[0] < self.block:
                    part = np.concatenate([part, np.zeros(self.block - part.shape[0], dtype=np.float32)])
                self._pending.append((part, playback, n == 0, n == len(starts) - 1))
        return playback

    def start(self) -> None:
        self._start = time.monotonic()
        self._k = 0
        self._stopped.clear()

    def read(self, timeout_s: float) -> np.ndarray | None:
        due = self._start + (self._k + 1) * self.block / self.sample_rate_hz
        wait_s = due - time.monotonic()
        if wait_s > timeout_s:
            self._stopped.wait(timeout_s)
            return None
        if wait_s > 0 and self._stopped.wait(wait_s):
            return None
        self._k += 1
        with self._lock:
            if not self._pending:
                return np.zeros(self.block, dtype=np.float32)
            block, playback, first, last = self._pending.popleft()
        now = time.time()  # the loop stamps a block as ending when read returns it
        if first:
            playback.started_at = now - self.block / self.sample_rate_hz
        if last:
            playback.ended_at = playback.started_at + playback.samples / self.sample_rate_hz
            playback.done.set()
        return block

    def stop(self) -> None:
        self._stopped.set()


# --- busy load ----------------------------------------------------------------------------------


class BusyLoad:
    """``with BusyLoad(n):`` runs ``n`` busy-loop Python processes (placed by the OS) and kills and
    reaps them on exit, also on an exception or Ctrl-C. They end by themselves if the bench dies."""

    def __init__(self, processes: int) -> None:
        self.processes = processes
        self.procs: list[subprocess.Popen[bytes]] = []

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.procs]

    def __enter__(self) -> BusyLoad:
        try:
            for _ in range(self.processes):
                self.procs.append(
                    subprocess.Popen(
                        [sys.executable, "-c", BUSY_LOOP, str(os.getpid())],
                        stdin=subprocess.DEVNULL,
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                    )
                )
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.kill()
        for p in self.procs:
            p.wait(timeout=10)


# --- clips --------------------------------------------------------------------------------------


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


# --- turns against clips ------------------------------------------------------------------------


@dataclass
class TurnCount:
    """Utterances (turn ids) heard in each clip's window, and what does not match one per clip."""

    per_clip: list[list[int]]
    split: list[int]
    """Indices of clips heard as more than one utterance."""
    merged: list[int]
    """Turn ids of utterances that span more than one clip."""
    missed: list[int]
    """Indices of clips heard as no utterance."""


def count_turns(
    windows: list[tuple[float, float]], utterances: list[tuple[int, float, float | None]], tolerance_s: float = 0.25
) -> TurnCount:
    """Match utterances ``(turn_id, first_voiced_at, last_voiced_at or None)`` to clip windows
    ``(start, end)`` (wall-clock seconds); an utterance belongs to every window it overlaps."""
    per_clip: list[list[int]] = [[] for _ in windows]
    merged = []
    for turn_id, first, last in utterances:
        end = first if last is None else last
        hit = [i for i, (a, b) in enumerate(windows) if first <= b + tolerance_s and end >= a - tolerance_s]
        for i in hit:
            per_clip[i].append(turn_id)
        if len(hit) > 1:
            merged.append(turn_id)
    split = [i for i, ids in enumerate(per_clip) if len(ids) > 1]
    missed = [i for i, ids in enumerate(per_clip) if not ids]
    return TurnCount(per_clip, split, merged, missed)


def utterances(events: list[Any]) -> list[tuple[int, float, float | None]]:
    """``(turn_id, first_voiced_at, last_voiced_at or None)`` of each ``SpeechStarted`` in ``events``."""
    from edgevox.voice.events import SpeechEnded, SpeechStarted

    ended = {e.turn_id: e.last_voiced_at for e in events if isinstance(e, SpeechEnded)}
    return [(e.turn_id, e.first_voiced_at, ended.get(e.turn_id)) for e in events if isinstance(e, SpeechStarted)]


class _Tap:
    """Every event of one app's bus, for the bench's own waits (an observer on the publisher's thread)."""

    def __init__(self) -> None:
        self._events: list[Any] = []
        self._lock = threading.Lock()

    def record(self, event: Any) -> None:
        with self._lock:
            self._events.append(event)

    def seen(self, cls: type, **fields: Any) -> list[Any]:
        with self._lock:
            events = list(self._events)
        return [e for e in events if isinstance(e, cls) and all(getattr(e, k) == v for k, v in fields.items())]


def _wait(predicate: Any, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)  # CLI polling of a live run, not test synchronisation
    return predicate()


# --- the run ------------------------------------------------------------------------------------


def config_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The bench plays the microphone and the speaker; the tuning options override the config."""
    out: dict[str, Any] = {"audio.input.source": "device", "audio.input.file": None, "audio.output.sink": "device"}
    for option, key in (
        ("end_silence_ms", "endpointing.end_silence_ms"),
        ("pause_ms", "endpointing.pause_ms"),
        ("speculative", "voice.speculative_stt"),
        ("tts_priority_ms", "voice.tts_priority_ms"),
        ("first_fragment_words", "voice.first_fragment_words"),
    ):
        if getattr(args, option, None) is not None:
            out[key] = getattr(args, option)
    return out


class _Bench:
    """Builds the apps (the first loads the models; later ones share its engines) and runs the parts."""

    def __init__(self, args: argparse.Namespace) -> None:
        from edgevox.config import load_config

        self.args = args
        self.overrides = config_overrides(args)
        self.config = load_config(args.config, overrides=self.overrides)
        self.engines: LoadedEngines | None = None
        self.load_s = 0.0
        self.clean = True

    def build(self, **extra: Any) -> tuple[Any, LiveMic, _Tap, Any]:
        from edgevox.app import App, Engines
        from edgevox.config import build as wiring
        from edgevox.config import load_config
        from edgevox.engines.audio_wav import NullOut
        from edgevox.voice.latency import LatencyObserver

        config = load_config(self.args.config, overrides={**self.overrides, **extra}) if extra else self.config
        mic = LiveMic(config.audio.sample_rate_hz, config.audio.input.block_ms)
        if self.engines is None:
            t0 = time.perf_counter()
            # The voice is made by the app's own factory (config.build); only its rate is needed
            # first, for the output.
            tts = wiring.make_tts(config.tts)
            given = Engines(tts=tts)
        else:
            # The heavy engines are shared; the VAD is not (Silero carries its stream state along).
            tts = self.engines.tts
            given = Engines(stt=self.engines.stt, llm=self.engines.llm, tts=tts)
        given.audio_in = mic
        given.audio_out = NullOut(
            sample_rate_hz=tts.sample_rate_hz, realtime=True, block_ms=config.audio.output.block_ms
        )
        app = App.build(config, engines=given)
        if self.engines is None:
            self.engines = app.engines
            self.load_s = time.perf_counter() - t0
            app.engines.stt.transcribe(np.zeros(SAMPLE_RATE_HZ, dtype=np.float32))  # builds Whisper's buffers
            for _ in app.engines.tts.synthesize("Okay."):
                pass
        tap = _Tap()
        app.add_observer(tap.record)
        observer = LatencyObserver().attach(app.bus)
        return app, mic, tap, observer

    def stop(self, app: Any) -> None:
        self.clean = bool(app.stop(timeout_s=10.0)) and self.clean

    def settle(self, app: Any, tap: _Tap, playback: Playback, timeout_s: float = 90.0) -> bool:
        """Wait until the clip has been played, its utterances ended and their replies played,
        then for the echo tail (speech right after a reply would count as echo)."""
        from edgevox.voice.events import SpeechEnded, SpeechStarted

        config = app.config
        deadline = time.monotonic() + timeout_s
        if not playback.done.wait(timeout_s):
            return False
        quiet_s = (config.endpointing.end_silence_ms + 200) / 1000

        def utterances_ended() -> bool:
            started = {e.turn_id for e in tap.seen(SpeechStarted)}
            return time.time() >= playback.ended_at + quiet_s and started <= {e.turn_id for e in tap.seen(SpeechEnded)}

        ok = _wait(utterances_ended, deadline - time.monotonic())
        ok = app.wait_idle(max(0.1, deadline - time.monotonic())) and ok
        gap_end = time.monotonic() + (config.voice.echo_tail_ms + 200) / 1000
        _wait(lambda: time.monotonic() >= gap_end, 5)
        return app.wait_idle(max(0.1, deadline - time.monotonic())) and ok

    @staticmethod
    def naive_baseline(app: Any, clips: list[Clip]) -> list[float]:
        """THE NAIVE BASELINE, deliberately not the product's loop: the only place this bench
        drives engines itself. The app's own STT, agent and TTS, each stage run to completion
        on the whole clip (endpointing silence, then transcribe, then the whole reply, then
        the whole speech), under the same load; seconds per clip."""
        from edgevox.agents.base import AgentStream

        agent = app.agent
        ctx = app.runtime.pool.make_ctx(session_id="bench-naive", agent_name=app.config.main_agent)
        end_silence_s = app.config.endpointing.end_silence_ms / 1000
        naive: list[float] = []
        for clip in clips:
            t = time.perf_counter()
            text = app.engines.stt.transcribe(clip.audio).text
            run = agent.stream(text, ctx)
            reply = "".join(run.text_deltas() if isinstance(run, AgentStream) else run)
            for _ in app.engines.tts.synthesize(reply or "Okay."):
                pass  # the whole speech must exist before the first sample can play
            naive.append(end_silence_s + time.perf_counter() - t)
        return naive

    def measure(self, clips: list[Clip], condition: str, busy: int, built: Any = None) -> dict[str, Any]:
        """One pass over the clips and the naive baseline, on a fresh app (or ``built``, from
        :meth:`build`), with ``busy`` processes."""
        from edgevox.voice.events import Chunk, SpeechEnded, TranscriptEvent, TurnStarted
        from edgevox.voice.latency import summarize

        app, mic, tap, observer = built or self.build()
        app.start()
        windows: list[tuple[float, float]] = []
        stuck: list[str] = []
        naive: list[float] = []
        try:
            with BusyLoad(busy) as load:
                for clip in clips:
                    playback = mic.play(clip.audio)
                    if not self.settle(app, tap, playback):
                        stuck.append(clip.name)
                    windows.append((playback.started_at, playback.ended_at))
                naive = self.naive_baseline(app, clips)
                pids = load.pids
        finally:
            self.stop(app)
        count = count_turns(windows, utterances(tap.seen(object)))
        heard = {t for ids in count.per_clip for t in ids}
        ignored = {e.turn_id for e in tap.seen(SpeechEnded) if e.ignored and e.turn_id in heard}
        turns = {e.turn_id for e in tap.seen(TurnStarted) if e.turn_id in heard}
        """Utterances that became turns (not empty, not a stop phrase, not ignored as echo)."""
        transcripts = {e.turn_id: e for e in tap.seen(TranscriptEvent) if e.turn_id in heard}
        summary = observer.summary(turn_ids=turns)
        for key in ("barge_in_audio_stop", "stop_cancel"):
            summary.pop(key, None)
        summary["stt_compute"] = summarize([e.stt_s for t, e in transcripts.items() if t in turns])
        summary["naive_baseline"] = summarize(naive)
        loop_p50 = summary["speech_end->first_audio"].get("p50")
        first_chunks = {e.turn_id: e.text for e in tap.seen(Chunk) if e.index == 0}
        trace = []
        for turn in observer.turns():
            if turn.turn_id in turns and "speech_end" in turn.marks:
                origin = turn.marks["speech_end"]
                trace.append(
                    {
                        "turn_id": turn.turn_id,
                        "ms_after_speech_end": {k: round((v - origin) * 1000) for k, v in turn.marks.items()},
                        "speculative_stt": bool(
                            transcripts.get(turn.turn_id) and transcripts[turn.turn_id].speculative
                        ),
                        "first_chunk": first_chunks.get(turn.turn_id, ""),
                    }
                )
        singles = [i for i, c in enumerate(clips) if c.group != "pause"]
        pauses = [i for i, c in enumerate(clips) if c.group == "pause"]
        return {
            "condition": condition,
            "busy_processes": busy,
            "busy_pids": pids,
            "summary": summary,
            "ratio_naive_over_loop_p50": summary["naive_baseline"]["p50"] / loop_p50 if loop_p50 else None,
            "utterances": len(heard),
            "turns": len(turns),
            "echo_ignored": len(ignored),
            "clips": len(singles),
            "pause_cases": len(pauses),
            "split": [clips[i].name for i in count.split if i in singles],
            "merged": len([t for t in count.merged if any(t in count.per_clip[i] for i in singles)]),
            "missed": [clips[i].name for i in count.missed if i in singles],
            "pause_split": [clips[i].name for i in count.split if i in pauses],
            "pause_missed": [clips[i].name for i in count.missed if i in pauses],
            "pause_merged": len([t for t in count.merged if any(t in count.per_clip[i] for i in pauses)]),
            "stuck": stuck,
            "speculative_transcripts": sum(1 for t, e in transcripts.items() if e.speculative and t in turns),
            "heard": [
                {
                    "said": c.text,
                    "heard": " | ".join(
                        transcripts[t].text + (" (ignored as echo)" if t in ignored else "")
                        for t in ids
                        if t in transcripts
                    ),
                    "utterances": len(ids),
                }
                for c, ids in zip(clips, count.per_clip, strict=True)
            ],
            "trace": trace,
        }

    def barge_ins(self, clips: list[Clip], trials: int) -> dict[str, Any]:
        """Speech over the reply, on the config with the echo guard off (so speech may barge in)."""
        from edgevox.voice.events import FirstAudio

        if trials == 0 or not clips:
            return {"n": 0}
        app, mic, tap, observer = self.build(**{"voice.echo_guard": "off", "voice.barge_in": True})
        app.start()
        try:
            for trial in range(trials):
                clip = clips[trial % len(clips)]
                before = len(tap.seen(FirstAudio))
                app.submit_text("Tell me a long story about a robot.")
                if _wait(lambda b=before: len(tap.seen(FirstAudio)) > b, 60):
                    self.settle(app, tap, mic.play(clip.audio))
                app.wait_idle(60)
        finally:
            self.stop(app)
        return observer.summary()["barge_in_audio_stop"]

    def stops(self, stop_audio: np.ndarray, trials: int) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
        """ "Stop" spoken during a long reply, with the config's own echo guard."""
        from edgevox.voice.events import FirstAudio, Stopped, TranscriptEvent, TurnDone
        from edgevox.voice.latency import summarize

        if trials == 0:
            return {"n": 0}, {"n": 0}, []
        app, mic, tap, observer = self.build()
        app.start()
        to_done: list[float] = []
        ended_as: list[str] = []
        topics = ("a robot", "the sea", "a city on Mars", "a lost cat", "a forest")
        try:
            for trial in range(trials):
                before = len(tap.seen(FirstAudio))
                turn_id = app.submit_text(f"Tell me a long story about {topics[trial % len(topics)]}.")
                if not _wait(lambda b=before: len(tap.seen(FirstAudio)) > b, 60):
                    ended_as.append("no reply audio")
                    app.wait_idle(60)
                    continue
                n_stops = len(tap.seen(Stopped))
                mic.play(stop_audio)
                if _wait(lambda n=n_stops: len(tap.seen(Stopped)) > n, 30):
                    _wait(lambda t=turn_id: bool(tap.seen(TurnDone, turn_id=t)), 10)
                    done = tap.seen(TurnDone, turn_id=turn_id, status="stopped")
                    heard = [e for e in tap.seen(TranscriptEvent) if e.stop_phrase]
                    if done and heard:
                        to_done.append(done[0].timestamp - heard[-1].timestamp)
                    ended = tap.seen(TurnDone, turn_id=turn_id)
                    ended_as.append(ended[0].status if ended else "turn still running")
                else:
                    texts = [e.text for e in tap.seen(TranscriptEvent)][-1:]
                    ended_as.append("no stop heard: " + repr(texts))
                app.wait_idle(60)
        finally:
            self.stop(app)
        return observer.summary()["stop_cancel"], summarize(to_done), ended_as


def run_bench(args: argparse.Namespace) -> dict[str, Any]:
    from edgevox.voice.stop_phrases import StopPhraseMatcher

    bench = _Bench(args)
    config = bench.config
    matcher = StopPhraseMatcher(config.safety.stop_phrases or ("stop",))

    def is_stop(text: str) -> bool:
        return matcher.match(text) is not None

    manifest = Path(args.manifest) if args.manifest else DEFAULT_MANIFEST
    if args.manifest and not manifest.is_file():
        raise ConfigError(f"bench latency: manifest {manifest}: no such file")
    clips: list[Clip] = []
    if manifest.is_file():
        from edgevox.config.build import make_vad

        # A VAD of its own (the config's kind) cuts the pause cases' words; the app's is untouched.
        vad = make_vad(config.vad, config.audio.sample_rate_hz) if args.pauses else None
        clips = load_clips(manifest, args.clips, args.pauses, is_stop, vad)
    busy = args.load or (os.cpu_count() or 1)
    conditions = (
        [("idle", 0), ("loaded", busy)] if args.compare_load else [("loaded" if args.load else "idle", args.load)]
    )
    passes = []
    stop_cancel: dict[str, Any] = {"n": 0}
    stop_to_done: dict[str, Any] = {"n": 0}
    stop_trials: list[str] = []
    barge: dict[str, Any] = {"n": 0}
    trial_pids: list[int] = []
    if not clips and manifest.is_file():
        raise ConfigError(f"bench latency: {manifest}: no usable clips (see --help for the groups used)")
    for n, (condition, processes) in enumerate(conditions):
        built = None
        if not clips:  # no manifest: say a few sentences with the app's own voice
            built = bench.build()
            assert bench.engines is not None  # the first build keeps its engines
            clips = synthesized_clips(bench.engines.tts, args.clips)
        passes.append(bench.measure(clips, condition, processes, built))
        if n == 0 and (args.barge_ins or args.stops):
            with BusyLoad(processes) as load:
                trial_pids = load.pids
                barge = bench.barge_ins([c for c in clips if c.group != "pause"], args.barge_ins)
                if args.stops:
                    audio = stop_clip(manifest, is_stop) if manifest.is_file() else None
                    if audio is None:
                        assert bench.engines is not None  # measure() built the app
                        audio = synthesized_stop(bench.engines.tts)
                    stop_cancel, stop_to_done, stop_trials = bench.stops(audio, args.stops)
    idle = next((p for p in passes if p["condition"] == "idle"), None)
    loaded = next((p for p in passes if p["condition"] == "loaded"), None)
    ratio = None
    if idle and loaded:
        a = idle["summary"]["speech_end->first_audio"].get("p50")
        b = loaded["summary"]["speech_end->first_audio"].get("p50")
        ratio = b / a if a and b else None
    return {
        "config": str(args.config),
        "app": config.name,
        "manifest": str(manifest) if manifest.is_file() else None,
        "clips": [{"name": c.name, "said": c.text, "group": c.group} for c in clips],
        "load_s": bench.load_s,
        "passes": passes,
        "loaded_over_idle_p50": ratio,
        "barge_in_audio_stop": barge,
        "stop_cancel": stop_cancel,
        "stop_transcript->turn_done": stop_to_done,
        "stop_trials": stop_trials,
        "trial_busy_pids": trial_pids,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "load_average_1min": os.getloadavg()[0],
        "cpu_count": os.cpu_count(),
        "clean_stop": bench.clean,
        "settings": {
            "end_silence_ms": config.endpointing.end_silence_ms,
            "pause_ms": config.endpointing.pause_ms,
            "speculative_stt": config.voice.speculative_stt,
            "tts_priority_ms": config.voice.tts_priority_ms,
            "first_fragment_words": config.voice.first_fragment_words,
            "echo_guard": config.voice.echo_guard,
            "llm.max_tokens": config.llm.max_tokens,
        },
    }


def synthesized_stop(tts: Any) -> np.ndarray:
    from edgevox.engines.resample import resample

    # Padded with 0.2 s of silence on each side, as a recorded word is: Whisper drops a bare
    # half-second "Stop!" that starts on the first sample (no-speech gate) or hears "start."
    voice = resample(np.concatenate(list(tts.synthesize("Stop!"))), tts.sample_rate_hz, SAMPLE_RATE_HZ)
    pad = np.zeros(SAMPLE_RATE_HZ // 5, dtype=voice.dtype)
    return np.concatenate([pad, voice, pad])


# --- printing -----------------------------------------------------------------------------------


def _row(name: str, stats: dict[str, Any], note: str = "") -> str:
    if not stats.get("n"):
        return f"{name:28s} {0:3d}"
    return (
        f"{name:28s} {stats['n']:3d} {stats['p50'] * 1000:8.0f} {stats['p95'] * 1000:8.0f} "
        f"{stats['max'] * 1000:8.0f}  {note}".rstrip()
    )


def _verdict(stats: dict[str, Any], targets: dict[str, float]) -> str:
    if not stats.get("n"):
        return ""
    parts = [f"{k} <= {v * 1000:.0f} ms {'ok' if stats[k] <= v else 'MISSED'}" for k, v in targets.items()]
    return "target: " + ", ".join(parts)


def _print_pass(p: dict[str, Any], trace: bool) -> None:
    busy = f"{p['busy_processes']} busy processes" if p["busy_processes"] else "no busy processes"
    print(f"\n{p['condition'].upper()} ({busy})")
    print(f"{'measure':28s} {'n':>3s} {'p50 ms':>8s} {'p95 ms':>8s} {'max ms':>8s}")
    targets = TARGETS_S[p["condition"]]
    for name, stats in p["summary"].items():
        print(_row(name, stats, _verdict(stats, targets) if name == "speech_end->first_audio" else ""))
    ratio = p["ratio_naive_over_loop_p50"]
    print(f"naive baseline / loop (p50): {ratio:.2f}x" if ratio else "naive baseline / loop: no loop figure")
    print(
        f"{p['utterances']} utterances heard for {p['clips']} clips + {p['pause_cases']} pause cases, "
        f"{p['turns']} turns, {p['echo_ignored']} ignored as echo (spoken during a reply)"
    )
    print(
        f"clips split {len(p['split'])}, merged {p['merged']}, missed {len(p['missed'])}; "
        f"pause cases split {len(p['pause_split'])} of {p['pause_cases']}, merged {p['pause_merged']}, "
        f"missed {len(p['pause_missed'])}"
    )
    for what in ("split", "missed", "pause_split", "pause_missed", "stuck"):
        if p[what]:
            print(f"  {what.replace('_', ' ')}: " + ", ".join(p[what]))
    print(f"speculative transcripts: {p['speculative_transcripts']} of {p['turns']} turns")
    if trace:
        for h in p["heard"]:
            print(
                f"  said {h['said']!r:42s} heard {h['heard']!r}"
                + (f" ({h['utterances']} utterances)" if h["utterances"] != 1 else "")
            )
        print("per turn, ms after the last voiced frame:")
        for row in p["trace"]:
            marks = " ".join(f"{k}={v}" for k, v in row["ms_after_speech_end"].items() if k != "speech_end")
            spec = " (speculative STT)" if row["speculative_stt"] else ""
            print(f"  turn {row['turn_id']:3d}: {marks}{spec}  first chunk {row['first_chunk']!r}")


def _print(result: dict[str, Any], trace: bool) -> None:
    groups: dict[str, int] = {}
    for c in result["clips"]:
        groups[c["group"]] = groups.get(c["group"], 0) + 1
    print(
        f"config {result['config']} ({result['app']}): "
        + ", ".join(f"{n} {g}" for g, n in groups.items())
        + f"; models loaded in {result['load_s']:.1f} s; peak RSS {result['peak_rss_mb']:.0f} MB"
    )
    print(
        f"CPUs {result['cpu_count']}, load average {result['load_average_1min']:.1f} (other work skews timings; "
        "compare ratios taken in one run)"
    )
    for p in result["passes"]:
        _print_pass(p, trace)
    if result["loaded_over_idle_p50"]:
        print(f"\nloaded / idle (p50 speech_end->first_audio): {result['loaded_over_idle_p50']:.2f}x")
    print(f"\nTRIALS (under the first condition: {result['passes'][0]['condition']})")
    for name in ("barge_in_audio_stop", "stop_cancel", "stop_transcript->turn_done"):
        target = TRIAL_TARGETS_S.get(name)
        print(_row(name, result[name], _verdict(result[name], {"p50": target}) if target else ""))
    print("stop trials, how the talking turn ended: " + (", ".join(result["stop_trials"]) or "none"))
    print("settings: " + ", ".join(f"{k}={v}" for k, v in result["settings"].items()))
    if not result["clean_stop"]:
        print("shutdown was not clean")


def _run(args: argparse.Namespace) -> int:
    result = run_bench(args)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        _print(result, bool(args.trace))
    return 0 if result["clean_stop"] else 1


def add_latency_parser(bench_subparsers: Any) -> argparse.ArgumentParser:
    """Add ``latency`` to the ``edgevox bench`` sub-commands."""
    p = bench_subparsers.add_parser(
        "latency",
        help="end-of-speech -> first audio latency of the application built from a config",
        description=__doc__.split("\n\n")[1] if __doc__ else None,
    )
    p.add_argument(
        "manifest",
        nargs="?",
        help=f"TSV with columns file, duration_s, transcript, category (default {DEFAULT_MANIFEST})",
    )
    p.add_argument(
        "--config", default="default", help="config file or builtin name to build the app from (default: default)"
    )
    p.add_argument("--clips", type=COUNT, default=30, help="clips from the manifest (0 = every usable one; default 30)")
    p.add_argument(
        "--pauses",
        type=whole(high=len(PAUSE_CASES)),
        default=3,
        help="digit strings with 400-500 ms pauses (default 3)",
    )
    p.add_argument("--barge-ins", type=COUNT, default=3, help="barge-in trials")
    p.add_argument("--stops", type=COUNT, default=3, help="safety-stop trials")
    p.add_argument("--load", type=whole(high=1024), default=0, help="busy-loop processes during the measured part")
    p.add_argument(
        "--compare-load",
        action="store_true",
        help="measure idle, then with --load processes (default: one per CPU), and print the ratio",
    )
    p.add_argument(
        "--end-silence-ms", type=whole(low=1, high=60_000), default=None, help="override endpointing.end_silence_ms"
    )
    p.add_argument("--pause-ms", type=whole(high=60_000), default=None, help="override endpointing.pause_ms")
    p.add_argument(
        "--speculative", action=argparse.BooleanOptionalAction, default=None, help="override voice.speculative_stt"
    )
    p.add_argument("--tts-priority-ms", type=whole(high=60_000), default=None, help="override voice.tts_priority_ms")
    p.add_argument(
        "--first-fragment-words", type=whole(high=1000), default=None, help="override voice.first_fragment_words"
    )
    p.add_argument(
        "--trace", action="store_true", help="also print what each clip was heard as, and every turn's marks"
    )
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.set_defaults(func=_run)
    return p


def main(argv: list[str] | None = None) -> int:  # pragma: no cover - for running the module directly
    parser = argparse.ArgumentParser(prog="edgevox bench")
    add_latency_parser(parser.add_subparsers(dest="bench"))
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
