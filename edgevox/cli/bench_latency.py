"""``edgevox bench latency [MANIFEST.tsv]``: end-to-end voice latency on the default models.

Utterances are played in real time (20 ms blocks, paced by the clock) into the
whole voice loop - VAD, endpointing, STT, chat agent, chunker, TTS - and the reply
"plays" on a real-time null output. Per turn the latency observer records the
user's last voiced frame -> transcript -> first token -> first chunk -> first
audio out. The same run also measures:

* barge-in: a second utterance starts while the reply plays; time from the first
  voiced frame to ``AudioOut.clear()`` (target <= 150 ms);
* safety stop: a spoken "stop" during a reply, on a second loop with the default
  half-duplex echo guard (with barge-in on, the speech onset would already have
  interrupted the reply); time from its transcript to every cancellation being
  issued (target <= 100 ms), and to the turn having ended, plus how each trial's
  turn ended;
* a naive baseline on the same clips: endpointing silence, then transcribe, then
  the whole reply, then the whole speech; and the ratio to the streaming loop.

Clips: a manifest's rows (columns ``file``, ``transcript``; ``file`` relative to
the manifest), or a built-in set of command clips from ``../shared/speech``
(synthesized with the default Piper voice when that folder is absent).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import sys
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

import numpy as np

from edgevox.cli.args import COUNT
from edgevox.errors import ConfigError

BUILTIN_CLIPS = (
    ("classic/goforward.wav", "go forward ten meters"),
    ("commands/voice2json_what_time_is_it.wav", "what time is it"),
    ("commands/stp_lock_the_Front_Door.wav", "lock the Front Door"),
    ("commands/voice2json_turn_on_living_room_lamp.wav", "turn on the living room lamp"),
    ("commands/stp_whats_the_weather.wav", "what's the weather"),
    ("commands/stp_set_a_timer_for_5_minutes.wav", "set a timer for 5 minutes"),
)
STOP_CLIP = ("commands/felix_stop_2.wav", "stop")
DEFAULT_SPEECH_DIR = Path(__file__).resolve().parents[3] / "shared" / "speech"


class LiveMic:
    """A real-time microphone: silence, plus whatever :meth:`play` queues, paced by the clock."""

    def __init__(self, sample_rate_hz: int = 16000, block_ms: int = 20) -> None:
        self.sample_rate_hz = sample_rate_hz
        self.block = sample_rate_hz * block_ms // 1000
        self._pending: deque[np.ndarray] = deque()
        self._lock = threading.Lock()
        self._start = 0.0
        self._k = 0
        self._stopped = threading.Event()
        self.finished = threading.Event()
        """Set when the last queued clip has been fully read."""

    def play(self, audio: np.ndarray) -> None:
        with self._lock:
            self.finished.clear()
            for i in range(0, audio.shape[0], self.block):
                part = audio[i : i + self.block]
                if part.shape[0] < self.block:
                    part = np.concatenate([part, np.zeros(self.block - part.shape[0], dtype=np.float32)])
                self._pending.append(part.astype(np.float32))

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
            if self._pending:
                block = self._pending.popleft()
                if not self._pending:
                    self.finished.set()
                return block
        return np.zeros(self.block, dtype=np.float32)

    def stop(self) -> None:
        self._stopped.set()


def load_clips(manifest: Path | None, speech_dir: Path, tts: Any, limit: int) -> list[tuple[str, np.ndarray]]:
    from edgevox.engines.audio_wav import read_wav
    from edgevox.engines.resample import resample

    clips: list[tuple[str, np.ndarray]] = []
    if manifest is not None:
        with manifest.open(newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f, delimiter="\t"):
                if not row.get("transcript"):
                    continue
                audio, rate = read_wav(manifest.parent / row["file"])
                clips.append((row["transcript"], resample(audio, rate, 16000)))
    elif speech_dir.is_dir():
        for rel, text in BUILTIN_CLIPS:
            audio, rate = read_wav(speech_dir / rel)
            clips.append((text, resample(audio, rate, 16000)))
    else:
        for _rel, text in BUILTIN_CLIPS:
            audio = np.concatenate(list(tts.synthesize(text)))
            clips.append((text, resample(audio, tts.sample_rate_hz, 16000)))
    return clips[:limit] if limit > 0 else clips


def stop_clip(speech_dir: Path, tts: Any) -> np.ndarray:
    from edgevox.engines.audio_wav import read_wav
    from edgevox.engines.resample import resample

    path = speech_dir / STOP_CLIP[0]
    if path.is_file():
        audio, rate = read_wav(path)
    else:
        audio, rate = np.concatenate(list(tts.synthesize("Stop!"))), tts.sample_rate_hz
    return resample(audio, rate, 16000)


class _Tap:
    """Every event of one bus, for the bench's own waits (an observer on the publisher's thread)."""

    def __init__(self, bus: Any) -> None:
        self._events: list[Any] = []
        self._lock = threading.Lock()
        bus.add_observer(self._record)

    def _record(self, event: Any) -> None:
        with self._lock:
            self._events.append(event)

    def seen(self, cls: type, **fields: Any) -> list[Any]:
        with self._lock:
            return [
                e for e in self._events if isinstance(e, cls) and all(getattr(e, k) == v for k, v in fields.items())
            ]


def _wait(predicate, timeout_s: float) -> bool:  # noqa: ANN001
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)  # CLI polling of a live run, not test synchronisation
    return predicate()


def run_bench(args: argparse.Namespace) -> dict[str, Any]:
    from edgevox.engines.audio_wav import NullOut
    from edgevox.runtime.bus import EventBus
    from edgevox.runtime.context import AgentContext
    from edgevox.voice.chat_agent import ChatAgent
    from edgevox.voice.chunker import ChunkerSettings
    from edgevox.voice.defaults import load_default_engines
    from edgevox.voice.events import Chunk, FirstAudio, Interrupted, Stopped, TranscriptEvent, TurnDone
    from edgevox.voice.latency import LatencyObserver, summarize
    from edgevox.voice.loop import VoiceLoop, VoiceSettings
    from edgevox.voice.segmenter import SegmenterSettings

    t0 = time.perf_counter()
    engines = load_default_engines()
    load_s = time.perf_counter() - t0
    agent = ChatAgent(engines.llm, max_tokens=args.max_tokens)
    agent.warmup()
    engines.stt.transcribe(np.zeros(16000, dtype=np.float32))  # first call builds Whisper's buffers
    for _ in engines.tts.synthesize("Okay."):
        pass
    speech_dir = Path(args.speech_dir)
    clips = load_clips(Path(args.manifest) if args.manifest else None, speech_dir, engines.tts, args.clips)
    if not clips:
        raise ConfigError(f"bench latency: no clips with a transcript in {args.manifest or speech_dir}")

    # One bus per loop: turn ids restart at 1 in every VoiceLoop.
    bus = EventBus("bench-latency")
    observer = LatencyObserver().attach(bus)
    tap = _Tap(bus)
    seen = tap.seen
    stop_bus = EventBus("bench-latency-stop")
    stop_observer = LatencyObserver().attach(stop_bus)
    stop_seen = _Tap(stop_bus).seen

    defaults = VoiceSettings()
    chunker = ChunkerSettings()
    if args.first_fragment_words is not None:
        chunker = ChunkerSettings(first_fragment_max_words=args.first_fragment_words)
    segmenter = SegmenterSettings(
        end_silence_ms=args.end_silence_ms,
        pause_ms=args.pause_ms if args.pause_ms is not None else SegmenterSettings().pause_ms,
    )
    speculative = defaults.speculative_stt if args.speculative is None else args.speculative
    tts_priority_ms = defaults.tts_priority_ms if args.tts_priority_ms is None else args.tts_priority_ms

    def make_loop(bus: Any, echo_guard: str, loop_agent: Any = agent) -> tuple[VoiceLoop, LiveMic]:
        settings = VoiceSettings(
            segmenter=segmenter,
            chunker=chunker,
            echo_guard=echo_guard,
            speculative_stt=speculative,
            tts_priority_ms=tts_priority_ms,
        )
        mic = LiveMic()
        out = NullOut(sample_rate_hz=engines.tts.sample_rate_hz, realtime=True)
        return VoiceLoop(bus, engines.vad, engines.stt, loop_agent, engines.tts, mic, out, settings), mic

    transcripts: list[tuple[str, str]] = []
    plain_turns: set[int] = set()
    stop_to_done: list[float] = []
    stop_trials: list[str] = []
    """Per stop trial: how the talking turn ended ("stopped" is what is measured)."""
    # Plain turns and barge-in: echo guard off (the null output has no acoustic path back to
    # the microphone), so speech over the reply interrupts it.
    loop, mic = make_loop(bus, "off")
    loop.start()
    try:
        # 1. Plain turns: one utterance, wait for the whole reply to play.
        for expected, audio in clips:
            before = len(seen(TurnDone))
            mic.play(audio)
            _wait(lambda b=before: len(seen(TurnDone)) > b, 60)
            heard = seen(TranscriptEvent)
            transcripts.append((expected, heard[-1].text if heard else ""))
            plain_turns.update(e.turn_id for e in seen(TurnDone)[before:])
            loop.wait_idle(30)
        # 2. Barge-in: speak again while the reply plays.
        for _expected, audio in clips[: args.barge_ins]:
            before = len(seen(FirstAudio))
            loop.submit_text("Tell me a long story about a robot.")
            if _wait(lambda b=before: len(seen(FirstAudio)) > b, 30):
                mic.play(audio)
                _wait(lambda: mic.finished.is_set(), 30)
            loop.wait_idle(60)
    finally:
        report = loop.stop(10)
    # 3. Safety stop: say "stop" while the reply plays, on a half-duplex loop (the default echo
    # guard), where speech over the reply is only checked for stop phrases. With barge-in on,
    # the speech onset would already have interrupted the turn and the stop path would have
    # nothing left to cancel.
    # Its own agent, with a one-exchange memory and a new topic per trial: with a longer
    # history SmolLM2 answers a repeated request briefly, and the reply ends before "stop".
    stop_agent = ChatAgent(engines.llm, max_tokens=args.max_tokens, max_history_turns=1)
    stop_loop, stop_mic = make_loop(stop_bus, "half_duplex", stop_agent)
    stop_loop.start()
    try:
        stop_audio = stop_clip(speech_dir, engines.tts)
        topics = ("a robot", "the sea", "a city on Mars", "a lost cat", "a forest")
        for trial in range(args.stops):
            before = len(stop_seen(FirstAudio))
            turn_id = stop_loop.submit_text(f"Tell me a long story about {topics[trial % len(topics)]}.")
            if _wait(lambda b=before: len(stop_seen(FirstAudio)) > b, 30):
                n_stops = len(stop_seen(Stopped))
                stop_mic.play(stop_audio)
                if _wait(lambda n=n_stops: len(stop_seen(Stopped)) > n, 30):
                    _wait(lambda t=turn_id: bool(stop_seen(TurnDone, turn_id=t)), 10)
                    done = stop_seen(TurnDone, turn_id=turn_id, status="stopped")
                    heard = [e for e in stop_seen(TranscriptEvent) if e.stop_phrase]
                    if done and heard:
                        stop_to_done.append(done[0].timestamp - heard[-1].timestamp)
                    ended = stop_seen(TurnDone, turn_id=turn_id)
                    stop_trials.append(ended[0].status if ended else "turn still running")
                else:
                    stop_trials.append("no stop heard: " + repr([e.text for e in stop_seen(TranscriptEvent)][-1:]))
            else:
                stop_trials.append("no reply audio")
            stop_loop.wait_idle(30)
    finally:
        stop_report = stop_loop.stop(10)
        bus.close()
        stop_bus.close()

    # 4. Naive baseline on the same clips: endpointing, then each stage to completion.
    naive: list[float] = []
    end_silence_s = args.end_silence_ms / 1000
    for _expected, audio in clips:
        t = time.perf_counter()
        text = engines.stt.transcribe(audio).text
        reply = "".join(agent.stream(text, AgentContext(session_id="naive-baseline")))
        for _ in engines.tts.synthesize(reply or "Okay."):
            pass  # the whole speech must exist before the first sample can play
        naive.append(end_silence_s + time.perf_counter() - t)

    summary = observer.summary(turn_ids=plain_turns)
    summary["stop_cancel"] = stop_observer.summary()["stop_cancel"]
    summary["stop_transcript->turn_done"] = summarize(stop_to_done)
    plain_transcripts = [e for e in seen(TranscriptEvent) if e.turn_id in plain_turns]
    summary["stt_compute"] = summarize([e.stt_s for e in plain_transcripts])
    summary["naive_baseline"] = summarize(naive)
    loop_p50 = summary["speech_end->first_audio"].get("p50")
    first_chunks = {e.turn_id: e.text for e in seen(Chunk) if e.index == 0}
    trace = []
    for turn in observer.turns():
        if turn.turn_id not in plain_turns or "speech_end" not in turn.marks:
            continue
        origin = turn.marks["speech_end"]
        trace.append(
            {
                "turn_id": turn.turn_id,
                "ms_after_speech_end": {k: round((v - origin) * 1000) for k, v in turn.marks.items()},
                "speculative_stt": any(e.speculative for e in plain_transcripts if e.turn_id == turn.turn_id),
                "first_chunk": first_chunks.get(turn.turn_id, ""),
            }
        )
    return {
        "clips": len(clips),
        "load_s": load_s,
        "summary": summary,
        "ratio_naive_over_loop_p50": (summary["naive_baseline"]["p50"] / loop_p50) if loop_p50 else None,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "load_average_1min": os.getloadavg()[0],
        "cpu_count": os.cpu_count(),
        "transcripts": transcripts,
        "speculative_transcripts": sum(1 for e in plain_transcripts if e.speculative),
        "trace": trace,
        "barge_ins": len(seen(Interrupted)),
        "stop_trials": stop_trials,
        "clean_stop": report.clean and stop_report.clean,
        "settings": {
            "end_silence_ms": segmenter.end_silence_ms,
            "pause_ms": segmenter.pause_ms,
            "speculative_stt": speculative,
            "tts_priority_ms": tts_priority_ms,
            "first_fragment_words": chunker.first_fragment_max_words,
        },
    }


def _print(result: dict[str, Any]) -> None:
    targets = {"speech_end->first_audio": 0.8, "barge_in_audio_stop": 0.15, "stop_cancel": 0.1}
    print(
        f"clips: {result['clips']}   models loaded in {result['load_s']:.1f} s   peak RSS {result['peak_rss_mb']:.0f} MB"
        f"   CPUs {result['cpu_count']}, load average {result['load_average_1min']:.1f} (other work skews timings)"
    )
    print(f"{'measure':34s} {'n':>3s} {'p50 ms':>8s} {'p95 ms':>8s} {'max ms':>8s}  target")
    for name, stats in result["summary"].items():
        if not stats.get("n"):
            print(f"{name:34s} {0:3d}")
            continue
        target = targets.get(name)
        verdict = ""
        if target is not None:
            verdict = f"<= {target * 1000:.0f} ms: {'ok' if stats['p50'] <= target else 'MISSED'}"
        print(
            f"{name:34s} {stats['n']:3d} {stats['p50'] * 1000:8.0f} {stats['p95'] * 1000:8.0f} "
            f"{stats['max'] * 1000:8.0f}  {verdict}"
        )
    print(f"speculative transcripts: {result['speculative_transcripts']} of {len(result['transcripts'])} turns")
    print("stop trials, how the talking turn ended: " + (", ".join(result["stop_trials"]) or "none"))
    ratio = result["ratio_naive_over_loop_p50"]
    if ratio:
        print(f"naive baseline / streaming loop (p50): {ratio:.2f}x")
    for expected, heard in result["transcripts"]:
        print(f"  said {expected!r:40s} heard {heard!r}")
    print("settings: " + ", ".join(f"{k}={v}" for k, v in result["settings"].items()))
    if result.get("trace_requested"):
        print("per turn, ms after the last voiced frame:")
        for row in result["trace"]:
            marks = " ".join(f"{k}={v}" for k, v in row["ms_after_speech_end"].items() if k != "speech_end")
            spec = " (speculative STT)" if row["speculative_stt"] else ""
            print(f"  turn {row['turn_id']:3d}: {marks}{spec}  first chunk {row['first_chunk']!r}")


def _run(args: argparse.Namespace) -> int:
    result = run_bench(args)
    result["trace_requested"] = bool(args.trace)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        _print(result)
    return 0 if result["clean_stop"] else 1


def add_latency_parser(bench_subparsers: Any) -> argparse.ArgumentParser:
    """Add ``latency`` to the ``edgevox bench`` sub-commands."""
    p = bench_subparsers.add_parser(
        "latency",
        help="end-of-speech -> first audio latency of the voice loop on the default models",
        description=__doc__.split("\n\n")[1] if __doc__ else None,
    )
    p.add_argument("manifest", nargs="?", help="TSV with columns file, transcript (default: built-in command clips)")
    p.add_argument("--clips", type=COUNT, default=6, help="use at most this many clips (0 = all)")
    p.add_argument("--barge-ins", type=COUNT, default=3, help="barge-in trials")
    p.add_argument("--stops", type=COUNT, default=3, help="safety-stop trials")
    p.add_argument(
        "--end-silence-ms", type=COUNT, default=300, help="endpointing silence (counts in the latency; default 300)"
    )
    p.add_argument(
        "--pause-ms", type=COUNT, default=None, help="silence before speculative STT starts (default: the segmenter's)"
    )
    p.add_argument(
        "--speculative",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="speculative STT at pauses (default: on, as in VoiceSettings)",
    )
    p.add_argument(
        "--tts-priority-ms",
        type=COUNT,
        default=None,
        help="pause the LLM while TTS runs with less than this much audio buffered (0 = off; default: VoiceSettings)",
    )
    p.add_argument(
        "--first-fragment-words",
        type=COUNT,
        default=None,
        help="chunker: force the first fragment after N words (0 = off; default: ChunkerSettings)",
    )
    p.add_argument("--trace", action="store_true", help="also print every plain turn's marks")
    p.add_argument("--max-tokens", type=COUNT, default=60, help="reply length limit")
    p.add_argument("--speech-dir", default=str(DEFAULT_SPEECH_DIR), help="folder of the built-in clips")
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
