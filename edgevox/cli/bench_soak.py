"""``edgevox bench soak``: the home robot driven for N minutes; memory, threads, fds, latency, lost turns.

The product runs as shipped: ``App.build(load_config("home_robot"))`` with the config's models
(Whisper, SmolLM2, Piper) and its voice loop, on a real audio device. A private PulseAudio
daemon with a null sink (:mod:`edgevox.testing.pulse`) is the room: the App's microphone is
the sink's monitor and its speaker is the sink, so the robot hears itself and the config's
echo guard is exercised as on a robot; a second output stream, the "user", plays recorded
human speech from ``../shared/speech`` into the same sink. Only two things are set for the
bench: the devices are named (``pulse`` at the sink's 16 kHz) and the simulated robot
drives slower (``--drive-speed-m-s``), so a spoken stop can catch a drive in the middle.

The script (:data:`SCRIPT`) repeats until the time is up: spoken and typed commands (one
starts the ``go_to`` skill, which a spoken "stop" then halts mid-drive), questions and
chit-chat, speech over a reply (a barge-in; under half-duplex only "stop" may cut in, so
both are tried), an interrupt published on the bus as a ROS or Zenoh peer would, an
announcement and a noise clip. Each step waits for the loop to be idle, then for
``--gap-s`` (a user's pause, longer than the echo tail) before the next one.

Per interval (``--interval-minutes``) one line: RSS, Python and OS thread counts, open fds,
latency p50/p95 (speech end, or the typed submit, -> the reply's first sample played) and
turns submitted / finished / lost, error events, stops and interrupts. At the end a
summary with the growth after warm-up and the thread count left after ``App.stop``.

Warm-up ends at ``--warmup-minutes`` or when the main agent's conversation memory first
holds more than its token budget, whichever is later: until then every prompt is longer than
the one before, llama.cpp touches new pages of its preallocated KV cache (~0.6 MB per turn
for SmolLM2) and the first prompt evaluated whole (~1,030 tokens, once the window slides)
touches its batch buffers (+30 MB once): bounded growth, not a leak.

Definitions:

* a **submitted** turn is one the loop accepted: a non-empty transcript that is neither a
  stop phrase nor the robot's own echo, a typed line, an announcement;
* a **lost** turn is a submitted one without ``TurnDone`` ``--turn-timeout-s`` after it
  was submitted (whatever its status: stopped and interrupted turns are finished);
* **error events**: ``ErrorEvent``, ``TurnDone(status="error")``, ``AudioDevice`` lost or
  failed, an agent state ``failed``.

Exit status 1 when a target is missed: a lost turn, an error event, RSS growth after
warm-up above ``--max-rss-growth-pct``, a skill still driving after a stop was heard, a
thread left after stop, or latency p95 of the last interval more than
``--max-p95-rise-pct`` above the first interval after warm-up (with at least two such
intervals). ``--diagnose`` adds per interval the top allocation sites since warm-up
(``tracemalloc``), the object types that grew (``gc``) and the thread names.

Rejected alternative: wiring a VoiceLoop of its own with fake devices (``bench latency``
does that for timing). A soak is for what the product leaks, so it runs the App, the
config and the real device path.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import threading
import time
import tracemalloc
from collections import Counter, deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from edgevox.cli.args import SECONDS, number, whole
from edgevox.errors import ConfigError

if TYPE_CHECKING:
    from edgevox.app import App
    from edgevox.config.schema import AppConfig

DEFAULT_SPEECH_DIR = Path(__file__).resolve().parents[3] / "shared" / "speech"
SINK_RATE_HZ = 16000
ROOMS = ("kitchen", "bedroom", "office", "bathroom", "living room")
TOPICS = ("a robot", "the sea", "a lighthouse", "a lost cat", "the moon")
STOP_CLIP = "commands/felix_stop_2.wav"

SCRIPT: tuple[tuple[str, str, str], ...] = (
    # (what the step exercises, action, argument)
    ("command, spoken", "speak", "classic/goforward.wav"),
    ("question, typed", "type", "what is the battery level"),
    ("question, spoken", "speak", "commands/voice2json_what_time_is_it.wav"),
    ("skill, typed; spoken stop mid-drive", "stop_mid_skill", "go to the {room}"),
    ("chit-chat, typed", "type", "how are you today?"),
    ("command, spoken", "speak", "commands/voice2json_turn_on_living_room_lamp.wav"),
    ("speech over the reply", "talk_over", "commands/stp_whats_the_weather.wav"),
    ("noise only", "speak", "noisy_farfield/noise_doing_the_dishes.wav"),
    ("command, typed", "type", "set a timer for 5 minutes"),
    ("spoken stop over the reply", "talk_over", STOP_CLIP),
    ("interrupt from the bus during the reply", "interrupt", "tell me a story about {topic}"),
    ("chit-chat, spoken", "speak", "librispeech/sense_and_sensibility_01_austen_64kb-0930.wav"),
    ("announcement", "say", "Reminder: the plants in the kitchen need water."),
    ("chit-chat, typed", "type", "thanks a lot"),
)
"""One cycle of the soak; the driver repeats it. Clips are paths under the speech folder."""


def add_soak_parser(bench_subparsers: Any) -> argparse.ArgumentParser:
    p = bench_subparsers.add_parser(
        "soak",
        help="run the home robot for N minutes (speech through PulseAudio, text, skills, stops, barge-ins); "
        "RSS, threads, fds, latency, lost turns and errors per interval",
        description=__doc__.split("\n\n")[1] if __doc__ else None,
    )
    minutes = number(high=7 * 24 * 60.0)
    percent = number(high=1000.0, inclusive_low=True)
    p.add_argument("--minutes", type=minutes, default=10.0, help="length of the run in minutes (default 10)")
    p.add_argument("--interval-minutes", type=minutes, default=10.0, help="report every M minutes (default 10)")
    p.add_argument(
        "--warmup-minutes",
        type=number(high=7 * 24 * 60.0, inclusive_low=True),
        default=None,
        help="RSS growth is measured from here, or from when the conversation memory is full if later "
        "(default: 2, or a third of a shorter run)",
    )
    p.add_argument("--config", default="home_robot", help="config name or file (default home_robot)")
    p.add_argument("--speech-dir", default=str(DEFAULT_SPEECH_DIR), help="folder of the recorded clips")
    p.add_argument(
        "--turn-timeout-s", type=SECONDS, default=60.0, help="a turn not done this long after it was submitted is lost"
    )
    p.add_argument(
        "--max-rss-growth-pct", type=percent, default=5.0, help="target: RSS growth after warm-up (default 5)"
    )
    p.add_argument(
        "--max-p95-rise-pct",
        type=percent,
        default=50.0,
        help="target: last interval's p95 over the first after warm-up",
    )
    p.add_argument(
        "--gap-s",
        type=number(high=3600.0, inclusive_low=True),
        default=1.0,
        help="pause between steps, as a user's (default 1.0)",
    )
    p.add_argument(
        "--drive-speed-m-s", type=number(high=10.0), default=0.5, help="simulated drive speed (a stop catches it)"
    )
    p.add_argument(
        "--speaker-rate-hz",
        type=whole(high=384_000),
        default=SINK_RATE_HZ,
        help="rate the speaker stream opens at: the sink's 16000 (edgevox resamples the voice), "
        "or 0 for the config's own (the voice's rate; PulseAudio converts)",
    )
    p.add_argument("--diagnose", action="store_true", help="per interval: tracemalloc top growth, gc types, threads")
    p.set_defaults(func=run_soak)
    return p


# --- process figures ---------------------------------------------------------------------------


@dataclass
class Sample:
    t_s: float
    """Seconds since the soak started."""
    rss_mb: float
    py_threads: int
    os_threads: int
    fds: int


def sample_process(t_s: float) -> Sample:
    """This process's resident memory, threads and open file descriptors (Linux ``/proc``)."""
    rss_kb = os_threads = 0
    with open("/proc/self/status", encoding="ascii", errors="replace") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss_kb = int(line.split()[1])
            elif line.startswith("Threads:"):
                os_threads = int(line.split()[1])
    fds = len(os.listdir("/proc/self/fd")) - 1  # minus listdir's own descriptor
    return Sample(t_s, rss_kb / 1024, threading.active_count(), os_threads, fds)


# --- what happened to every turn ---------------------------------------------------------------


@dataclass
class _Turn:
    submitted_at: float
    """``time.monotonic()`` when the loop accepted it."""
    origin_wall: float
    """Wall-clock start of the latency: the user's last voiced frame, or the typed submit."""
    origin: str
    """``voice``, ``text`` or ``say``."""
    text: str
    first_audio: bool = False


@dataclass
class Counts:
    submitted: int = 0
    finished: int = 0
    statuses: Counter = field(default_factory=Counter)
    stops: int = 0
    interrupted: int = 0
    utterances: int = 0
    echo_ignored: int = 0
    empty: int = 0


class TurnLedger:
    """Bus observer: every turn from submission to ``TurnDone``, first-audio latency, error events.

    ``on_event`` runs on the publishing thread (capture, STT, turn, TTS threads); it keeps
    only unfinished turns and the current interval's latencies, so the bench itself does not
    grow. Every other method may be called from any thread.
    """

    def __init__(self, turn_timeout_s: float) -> None:
        from edgevox.voice.speechtext import clean_for_speech

        self._speakable = lambda text: bool(clean_for_speech(text[:500]))
        self.turn_timeout_s = turn_timeout_s
        self._cond = threading.Condition()
        self._pending: dict[int, _Turn] = {}
        self._speech_end: dict[int, float] = {}
        self._echo: set[int] = set()
        self._first_audio: set[int] = set()
        self.counts = Counts()
        self.latencies_s: list[float] = []
        """User turns' latencies since the last :meth:`take_latencies`."""
        self.errors: list[str] = []
        self.lost: dict[int, str] = {}
        self.late = 0
        """Lost turns that finished after all (after the timeout)."""
        self.trail: deque[str] = deque(maxlen=60)
        """The latest events, one line each (printed when a step hangs)."""

    def on_event(self, event: Any) -> None:
        from edgevox.runtime.events import AgentStateEvent, ErrorEvent
        from edgevox.voice.events import (
            AudioDevice,
            FirstAudio,
            Interrupted,
            SpeechEnded,
            Stopped,
            TranscriptEvent,
            TurnDone,
            TurnStarted,
        )

        self.trail.append(_describe(event))
        if not isinstance(
            event,
            (
                SpeechEnded,
                TranscriptEvent,
                TurnStarted,
                FirstAudio,
                TurnDone,
                Stopped,
                Interrupted,
                ErrorEvent,
                AudioDevice,
                AgentStateEvent,
            ),
        ):
            return  # tokens, chunks: the bulk of the traffic
        now = time.monotonic()
        with self._cond:
            c = self.counts
            turn_id = getattr(event, "turn_id", 0)
            if isinstance(event, SpeechEnded):
                c.utterances += 1
                if event.ignored:
                    self._echo.add(turn_id)
                else:
                    self._speech_end[turn_id] = event.last_voiced_at
            elif isinstance(event, TranscriptEvent):
                echo = turn_id in self._echo
                self._echo.discard(turn_id)
                end = self._speech_end.pop(turn_id, None)
                if event.stop_phrase:
                    pass  # never a turn: counted by Stopped
                elif echo:
                    c.echo_ignored += 1
                elif not event.text or not self._speakable(event.text):
                    c.empty += 1
                else:
                    origin = event.timestamp if event.origin == "text" or end is None else end
                    self._pending[turn_id] = _Turn(now, origin, event.origin, event.text)
                    c.submitted += 1
            elif isinstance(event, TurnStarted):
                if turn_id not in self._pending:  # an announcement or the stop's confirmation
                    self._pending[turn_id] = _Turn(now, event.timestamp, "say", event.text)
                    c.submitted += 1
            elif isinstance(event, FirstAudio):
                self._first_audio.add(turn_id)
                if len(self._first_audio) > 100:
                    self._first_audio.discard(min(self._first_audio))
                turn = self._pending.get(turn_id)
                if turn is not None and not turn.first_audio:
                    turn.first_audio = True
                    if turn.origin != "say":
                        self.latencies_s.append(event.timestamp - turn.origin_wall)
            elif isinstance(event, TurnDone):
                turn = self._pending.pop(turn_id, None)
                if turn is not None:
                    c.finished += 1
                    c.statuses[event.status] += 1
                    if turn_id in self.lost:
                        self.late += 1
                if event.status == "error":
                    self.errors.append(f"turn {turn_id} ended with an error: {event.error}")
            elif isinstance(event, Stopped):
                c.stops += 1
            elif isinstance(event, Interrupted):
                c.interrupted += 1
            elif isinstance(event, ErrorEvent):
                self.errors.append(f"ErrorEvent {event.where}: {event.error}")
            elif isinstance(event, AudioDevice):
                if event.state in ("lost", "failed"):
                    self.errors.append(f"audio device {event.state}: {event.error}")
            elif isinstance(event, AgentStateEvent) and event.state == "failed":
                self.errors.append(f"agent {event.agent} failed: {event.error}")
            # Bounded: ids of utterances that never got a transcript (an STT error) are dropped.
            if len(self._speech_end) > 100:
                self._speech_end.pop(next(iter(self._speech_end)))
            if len(self._echo) > 100:
                self._echo.clear()
            self._cond.notify_all()

    def wait_for(self, predicate: Any, timeout_s: float) -> bool:
        """Wait until ``predicate(ledger)`` holds (checked whenever an event arrives)."""
        with self._cond:
            return self._cond.wait_for(lambda: predicate(self), timeout=timeout_s)

    def played(self, turn_id: int) -> bool:
        """Whether the reply of ``turn_id`` (a recent one) has started playing."""
        return turn_id in self._first_audio

    def sweep(self) -> int:
        """Mark turns pending longer than the timeout as lost; returns the lost count."""
        now = time.monotonic()
        with self._cond:
            for turn_id, turn in self._pending.items():
                if turn_id not in self.lost and now - turn.submitted_at > self.turn_timeout_s:
                    self.lost[turn_id] = f"turn {turn_id} ({turn.origin}) {turn.text[:60]!r}"
            return len(self.lost)

    def take_latencies(self) -> list[float]:
        with self._cond:
            out, self.latencies_s = self.latencies_s, []
            return out

    def snapshot(self) -> tuple[Counts, int, int]:
        """(counts, errors so far, lost so far)."""
        with self._cond:
            c = self.counts
            copy = Counts(
                c.submitted,
                c.finished,
                Counter(c.statuses),
                c.stops,
                c.interrupted,
                c.utterances,
                c.echo_ignored,
                c.empty,
            )
            return copy, len(self.errors), len(self.lost)


# --- the user ----------------------------------------------------------------------------------


class Driver:
    """Plays the script against a running App: the user's voice is a second stream into the sink."""

    def __init__(self, app: Any, ledger: TurnLedger, voice: Any, clips: dict[str, np.ndarray], args: Any) -> None:
        self.app = app
        self.ledger = ledger
        self.voice = voice
        self.clips = clips
        self.args = args
        self.cycle = 0
        self.steps: Counter = Counter()
        self.stuck: list[str] = []
        """Steps after which the loop was not idle within the turn timeout."""
        self.skill_stops: Counter = Counter()
        """Stop mid-drive: ``halted``, ``kept driving``, ``not heard``, ``no skill started``."""

    def run_step(self, index: int) -> None:
        what, action, arg = SCRIPT[index % len(SCRIPT)]
        self.cycle = index // len(SCRIPT)
        arg = arg.format(room=ROOMS[self.cycle % len(ROOMS)], topic=TOPICS[self.cycle % len(TOPICS)])
        getattr(self, f"_{action}")(arg)
        self.steps[what] += 1
        if not self.app.wait_idle(self.args.turn_timeout_s):
            self.stuck.append(f"cycle {self.cycle} step {index % len(SCRIPT)} ({what})")
            lines = _thread_stacks() + _speaker_state(self.app)  # where it hangs: the lost turn's cause
            lines += [f"  event {line}" for line in list(self.ledger.trail)]
            for line in lines:
                print(line, flush=True)
            return
        time.sleep(self.args.gap_s)  # the user's pause; also outlasts the half-duplex echo tail

    # -- actions --

    def _play(self, clip: str) -> None:
        """Speak a clip into the room and wait until it has been played out."""
        audio = self.clips[clip]
        self.voice.write(audio)
        self.voice.drain(audio.shape[0] / SINK_RATE_HZ + 5.0)

    def _speak(self, clip: str) -> None:
        before = self.ledger.counts.utterances
        self._play(clip)
        # The endpoint fires end-of-speech silence after the clip; noise may make no utterance.
        self.ledger.wait_for(lambda led: led.counts.utterances > before, 3.0)

    def _type(self, text: str) -> None:
        self.app.submit_text(text)

    def _say(self, text: str) -> None:
        self.app.say(text)

    def _reply_playing(self, text: str) -> bool:
        turn_id = self.app.submit_text(text)
        return self.ledger.wait_for(lambda led: led.played(turn_id), self.args.turn_timeout_s)

    def _talk_over(self, clip: str) -> None:
        topic = TOPICS[self.cycle % len(TOPICS)]
        if self._reply_playing(f"tell me a story about {topic}"):
            self._play(clip)

    def _interrupt(self, text: str) -> None:
        from edgevox.runtime.events import InterruptEvent

        if self._reply_playing(text):
            self.app.bus.publish(InterruptEvent(source="bench-soak", reason="interrupt from the soak bench"))

    def _stop_mid_skill(self, text: str) -> None:
        self.app.submit_text(text)
        self.app.wait_idle(self.args.turn_timeout_s)  # the reply ends; the drive goes on
        skills = self.app.runtime.activities.running("skill")
        if not skills:
            self.skill_stops["no skill started"] += 1
            return
        stops = self.ledger.counts.stops
        self._speak(STOP_CLIP)
        if not self.ledger.wait_for(lambda led: led.counts.stops > stops, 10.0):
            self.skill_stops["not heard"] += 1
            print(f"stop not heard mid-drive (cycle {self.cycle}); the last events:", flush=True)
            for line in list(self.ledger.trail)[-25:]:
                print(f"  event {line}", flush=True)
            return
        ended = all(s.wait(2.0) for s in skills)
        self.skill_stops["halted" if ended else "kept driving"] += 1


def load_clips(speech_dir: Path) -> dict[str, np.ndarray]:
    """Every clip the script speaks, at the sink's rate."""
    from edgevox.engines.audio_wav import read_wav
    from edgevox.engines.resample import resample

    names = {arg for _what, action, arg in SCRIPT if action in ("speak", "talk_over")} | {STOP_CLIP}
    clips = {}
    for name in sorted(names):
        path = speech_dir / name
        if not path.is_file():
            raise ConfigError(f"bench soak: {path}: no such clip; give the shared speech folder with --speech-dir")
        audio, rate = read_wav(path)
        clips[name] = resample(audio, rate, SINK_RATE_HZ).astype(np.float32)
    return clips


# --- the run -----------------------------------------------------------------------------------


def run_soak(args: argparse.Namespace) -> int:
    from edgevox.testing.pulse import private_pulseaudio, pulseaudio_installed, reinitialize_portaudio

    if args.warmup_minutes is None:
        args.warmup_minutes = min(2.0, args.minutes / 3)
    if not pulseaudio_installed():
        raise ConfigError(
            "bench soak needs PulseAudio for its audio device: apt-get install -y --no-install-recommends "
            "pulseaudio pulseaudio-utils libasound2-plugins libportaudio2 (or bash scripts/setup.sh)"
        )
    clips = load_clips(Path(args.speech_dir))
    with private_pulseaudio(rate_hz=SINK_RATE_HZ):
        reinitialize_portaudio()
        report = Soak(args, clips).run()
    reinitialize_portaudio()
    for line in report.summary_lines():
        print(line, flush=True)
    return 0 if not report.missed else 1


@dataclass
class Interval:
    end_s: float
    last: Sample
    max_rss_mb: float
    latencies_s: list[float]
    counts: Counts
    errors: int
    lost: int


class Soak:
    """One soak run: builds and starts the App, drives it, samples, prints interval lines."""

    def __init__(self, args: argparse.Namespace, clips: dict[str, np.ndarray]) -> None:
        self.args = args
        self.clips = clips
        self.samples: list[Sample] = []
        self.intervals: list[Interval] = []
        self.warm: Sample | None = None

    def _print(self, line: str) -> None:
        print(line, flush=True)

    def build(self) -> App:
        from edgevox.agents.llm_agent import LLMAgent
        from edgevox.app import App
        from edgevox.config import load_config

        devices = {
            "audio.input.source": "device",
            "audio.input.device": "pulse",
            "audio.input.device_sample_rate_hz": SINK_RATE_HZ,
            "audio.output.sink": "device",
            "audio.output.device": "pulse",
        }
        if self.args.speaker_rate_hz:
            devices["audio.output.device_sample_rate_hz"] = self.args.speaker_rate_hz
        config = load_config(self.args.config, overrides=devices, env=dict(os.environ))
        t0 = time.perf_counter()
        app = App.build(config)
        self.config = config
        self.load_s = time.perf_counter() - t0
        agent = app.agents.get(config.main_agent)
        robot = agent.deps.get("robot") if isinstance(agent, LLMAgent) else None
        if robot is not None:
            robot.speed_m_s = self.args.drive_speed_m_s
        return app

    def run(self) -> SoakReport:
        from edgevox.engines.audio_sounddevice import SoundDeviceOut

        args = self.args
        if args.diagnose:
            tracemalloc.start(1)  # one frame: where, not who called; cheaper on a long run
        ledger = TurnLedger(args.turn_timeout_s)
        app = self.build()
        app.add_observer(ledger.on_event)
        voice = SoundDeviceOut(device="pulse", sample_rate_hz=SINK_RATE_HZ, device_rate_hz=SINK_RATE_HZ)
        duration_s = args.minutes * 60
        interval_s = min(args.interval_minutes, args.minutes) * 60
        self._print(
            f"soak: config {self.config.name}, {args.minutes:g} min, intervals of {interval_s / 60:g} min, "
            f"warm-up {args.warmup_minutes:g} min; models loaded in {self.load_s:.1f} s; "
            f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}"
        )
        driver = Driver(app, ledger, voice, self.clips, args)
        app.start()
        stop_clean = False
        try:
            voice.start()
            self.t0 = time.monotonic()
            self._sample()
            next_report = interval_s
            index = 0
            try:
                while self._elapsed() < duration_s:
                    driver.run_step(index)
                    if driver.stuck:
                        # Every later turn would queue behind the stuck one: nothing more to learn.
                        self._print(
                            f"stopping at {self._elapsed() / 60:.1f} min: the loop was not idle "
                            f"{args.turn_timeout_s:g} s after step {index + 1}"
                        )
                        break
                    index += 1
                    self._sample()
                    if self.warm is None and self._elapsed() >= args.warmup_minutes * 60:
                        full = _memory_fill(app, self.config)
                        if full is None or full >= 1.0:  # the window has slid: the longest prompt ran
                            self._warm_up_done(full)
                    if self._elapsed() >= next_report:
                        self._report_interval(ledger)
                        while next_report <= self._elapsed():
                            next_report += interval_s
            except KeyboardInterrupt:
                self._print(f"interrupted at {self._elapsed() / 60:.1f} min; finishing the report")
            # Whatever is still running gets the turn timeout to finish before it counts as lost.
            if not driver.stuck:
                app.wait_idle(args.turn_timeout_s)
                ledger.wait_for(lambda led: not led._pending, args.turn_timeout_s)
            self._sample()
            if self.warm is None:
                self._warm_up_done(_memory_fill(app, self.config))
            if self.samples[-1].t_s > (self.intervals[-1].end_s if self.intervals else 0.0) + 1.0:
                self._report_interval(ledger)
        finally:
            stop_clean = bool(app.stop(10.0))
            voice.stop()
        return SoakReport(self, ledger, driver, stop_clean, app.stop_report, _device_figures(app))

    def _elapsed(self) -> float:
        return time.monotonic() - self.t0

    def _sample(self) -> None:
        self.samples.append(sample_process(self._elapsed()))

    def _warm_up_done(self, memory_fill: float | None) -> None:
        self.warm = self.samples[-1]
        memory = "" if memory_fill is None else f"; conversation memory {100 * memory_fill:.0f} % of its token budget"
        self._print(f"warm-up ended at {self.warm.t_s / 60:.1f} min: RSS {self.warm.rss_mb:.1f} MB{memory}")
        if self.args.diagnose:
            self._snapshot = tracemalloc.take_snapshot()
            self._types = _type_counts()

    def _report_interval(self, ledger: TurnLedger) -> None:
        ledger.sweep()
        start = self.intervals[-1].end_s if self.intervals else 0.0
        now = self.samples[-1]
        window = [s for s in self.samples if s.t_s > start] or [now]
        counts, errors, lost = ledger.snapshot()
        prev = self.intervals[-1] if self.intervals else None
        iv = Interval(
            end_s=now.t_s,
            last=now,
            max_rss_mb=max(s.rss_mb for s in window),
            latencies_s=ledger.take_latencies(),
            counts=counts,
            errors=errors,
            lost=lost,
        )
        self.intervals.append(iv)
        pc = prev.counts if prev else Counts()
        lat = iv.latencies_s
        latency = (
            f"latency p50 {1000 * statistics.median(lat):.0f} ms p95 {1000 * _p95(lat):.0f} ms (n {len(lat)})"
            if lat
            else "latency n 0"
        )
        self._print(
            f"{now.t_s / 60:6.1f} min  RSS {now.rss_mb:.1f} MB (max {iv.max_rss_mb:.1f})  "
            f"threads {now.py_threads} py / {now.os_threads} os  fds {now.fds}  {latency}  "
            f"turns {counts.submitted - pc.submitted} submitted, {counts.finished - pc.finished} finished, "
            f"{lost - (prev.lost if prev else 0)} lost  errors {errors - (prev.errors if prev else 0)}  "
            f"stops {counts.stops - pc.stops}  interrupts {counts.interrupted - pc.interrupted}"
        )
        for line in ledger.errors[(prev.errors if prev else 0) :]:
            self._print(f"  error at {now.t_s / 60:.1f} min: {line}")
        if self.args.diagnose:
            self._diagnose()

    def _diagnose(self) -> None:
        threads = Counter(t.name.rstrip("0123456789") for t in threading.enumerate())
        self._print("  threads: " + ", ".join(f"{n} x{c}" for n, c in threads.most_common()))
        if self.warm is None:
            return
        snap = tracemalloc.take_snapshot().filter_traces((tracemalloc.Filter(False, tracemalloc.__file__),))
        for stat in snap.compare_to(self._snapshot, "lineno")[:8]:
            self._print(f"  alloc {stat.size_diff / 1024:+9.1f} KiB {stat.count_diff:+7d} blocks  {stat.traceback[0]}")
        grown = _type_counts()
        grown.subtract(self._types)
        for name, n in grown.most_common(8):
            self._print(f"  gc objects {name}: {n:+d}")


def _p95(values: list[float]) -> float:
    from edgevox.voice.latency import percentile

    return percentile(values, 95)


def _type_counts() -> Counter:
    gc.collect()
    return Counter(type(o).__qualname__ for o in gc.get_objects())


class SoakReport:
    """The end of a run: figures, targets, and the lines printed after the interval lines."""

    def __init__(
        self, soak: Soak, ledger: TurnLedger, driver: Driver, stop_clean: bool, stop_report: Any, devices: str
    ) -> None:
        self.devices = devices
        self.soak = soak
        self.ledger = ledger
        self.driver = driver
        self.stop_clean = stop_clean
        self.stop_report = stop_report
        self.left_threads = _threads_left()
        self.after_stop = sample_process(soak._elapsed())
        self.missed = self._targets()

    def _targets(self) -> list[str]:
        args = self.soak.args
        missed = []
        led = self.ledger
        if led.lost:
            missed.append(f"{len(led.lost)} lost turns")
        if led.errors:
            missed.append(f"{len(led.errors)} error events")
        growth = self.rss_growth_pct()
        if growth > args.max_rss_growth_pct:
            missed.append(f"RSS grew {growth:.1f} % after warm-up (target < {args.max_rss_growth_pct:g} %)")
        if self.driver.skill_stops["kept driving"]:
            missed.append(f"{self.driver.skill_stops['kept driving']} skills kept driving after a stop")
        if self.left_threads or not self.stop_clean:
            missed.append(f"{len(self.left_threads)} threads left after stop ({self.stop_report})")
        rise = self.p95_rise_pct()
        if rise is not None and rise > args.max_p95_rise_pct:
            missed.append(f"latency p95 rose {rise:.0f} % (target <= {args.max_p95_rise_pct:g} %)")
        return missed

    def rss_growth_pct(self) -> float:
        warm, end = self.soak.warm, self.soak.samples[-1]
        assert warm is not None
        return 100 * (end.rss_mb - warm.rss_mb) / warm.rss_mb

    def _checked_p95(self) -> list[tuple[float, float]]:
        """(interval end in minutes, p95 s) of intervals after warm-up with enough turns to judge."""
        assert self.soak.warm is not None
        warm_s = self.soak.warm.t_s
        return [
            (iv.end_s / 60, _p95(iv.latencies_s))
            for iv in self.soak.intervals
            if iv.end_s > warm_s and len(iv.latencies_s) >= 10
        ]

    def p95_rise_pct(self) -> float | None:
        p = self._checked_p95()
        if len(p) < 2:
            return None
        return 100 * (p[-1][1] - p[0][1]) / p[0][1]

    def summary_lines(self) -> list[str]:
        soak, led, drv = self.soak, self.ledger, self.driver
        c = led.counts
        warm, end = soak.warm, soak.samples[-1]
        assert warm is not None
        post = [s for s in soak.samples if s.t_s >= warm.t_s]
        slope = _slope_mb_per_10min(post)
        all_lat = [v for iv in soak.intervals for v in iv.latencies_s]
        lines = [
            f"summary: {end.t_s / 60:.1f} min, {drv.cycle + 1} cycles, {sum(drv.steps.values())} steps; "
            f"turns {c.submitted} submitted, {c.finished} finished, {len(led.lost)} lost ({led.late} finished late); "
            f"{len(led.errors)} error events",
            f"RSS {warm.rss_mb:.1f} MB at warm-up end ({warm.t_s / 60:.1f} min) -> {end.rss_mb:.1f} MB at the end: "
            f"{self.rss_growth_pct():+.1f} % (target < {soak.args.max_rss_growth_pct:g} %); "
            f"slope {slope:+.1f} MB per 10 min after warm-up",
            f"threads {warm.py_threads} py / {warm.os_threads} os at warm-up end -> {end.py_threads} / {end.os_threads} "
            f"at the end; fds {warm.fds} -> {end.fds}",
        ]
        if all_lat:
            lines.append(
                f"latency over the run: p50 {1000 * statistics.median(all_lat):.0f} ms, p95 {1000 * _p95(all_lat):.0f} ms, "
                f"max {1000 * max(all_lat):.0f} ms (n {len(all_lat)})"
            )
        checked = self._checked_p95()
        rise = self.p95_rise_pct()
        lines.append(
            "latency p95 per interval after warm-up: "
            + (", ".join(f"{m:.1f} min {1000 * v:.0f} ms" for m, v in checked) or "0 intervals with >= 10 turns")
            + (
                f"; last vs first {rise:+.0f} % (target <= {soak.args.max_p95_rise_pct:g} %)"
                if rise is not None
                else ""
            )
        )
        lines.append(
            "turn endings: "
            + ", ".join(f"{k} {v}" for k, v in sorted(c.statuses.items()))
            + f"; {c.utterances} utterances heard, {c.echo_ignored} ignored as echo, {c.empty} without words; "
            f"{c.stops} stops, {c.interrupted} interrupts"
        )
        lines.append(
            "stop mid-drive: "
            + ", ".join(
                f"{k} {drv.skill_stops[k]}" for k in ("halted", "kept driving", "not heard", "no skill started")
            )
        )
        lines.append(
            f"after stop: {len(self.left_threads)} edgevox threads left{': ' + ', '.join(self.left_threads) if self.left_threads else ''}; "
            f"{self.after_stop.py_threads} py / {self.after_stop.os_threads} os threads, {self.after_stop.fds} fds; "
            f"App.stop {'clean' if self.stop_clean else 'NOT clean'} ({len(self.stop_report.abandoned)} abandoned)"
        )
        lines.append(self.devices)
        lines += [f"lost {i + 1}: {text}" for i, text in enumerate(led.lost.values())]
        lines += [f"error {i + 1}: {text}" for i, text in enumerate(led.errors)]
        lines += [f"stuck {i + 1}: not idle {soak.args.turn_timeout_s:g} s after {s}" for i, s in enumerate(drv.stuck)]
        if self.missed:
            lines.append(f"verdict: {len(self.missed)} targets missed: " + "; ".join(self.missed))
        else:
            lines.append("verdict: 0 targets missed")
        return lines


def _slope_mb_per_10min(samples: list[Sample]) -> float:
    """Least-squares slope of RSS over time, in MB per 10 minutes (0 with fewer than 2 samples)."""
    if len(samples) < 2:
        return 0.0
    t = np.array([s.t_s for s in samples])
    y = np.array([s.rss_mb for s in samples])
    if float(np.ptp(t)) == 0.0:
        return 0.0
    return float(np.polyfit(t, y, 1)[0]) * 600


def _threads_left(grace_s: float = 2.0) -> list[str]:
    """edgevox threads still alive after joining them for ``grace_s`` in total."""
    deadline = time.monotonic() + grace_s
    for t in threading.enumerate():
        if t.name.startswith("edgevox") and t is not threading.current_thread():
            t.join(max(0.0, deadline - time.monotonic()))
    return sorted(t.name for t in threading.enumerate() if t.name.startswith("edgevox") and t.is_alive())


def _thread_stacks() -> list[str]:
    """The innermost frames of every edgevox thread, one line per frame."""
    import sys
    import traceback

    names = {t.ident: t.name for t in threading.enumerate()}
    lines = []
    for ident, frame in sys._current_frames().items():
        name = names.get(ident, str(ident))
        if not name.startswith("edgevox"):
            continue
        for fs in traceback.extract_stack(frame)[-4:]:
            lines.append(f"  stack {name}: {fs.filename}:{fs.lineno} {fs.name}")
    return lines


def _speaker_state(app: Any) -> list[str]:
    """What the loop's speaker waits for (private state, read for diagnosis only)."""
    speaker, out = app.loop.speaker, app.loop.audio_out
    turn = speaker.current
    lines = [
        f"  output: played {out.played_samples} samples at {out.sample_rate_hz} Hz, written up to "
        f"{getattr(speaker, '_write_pos', -1)}, queued {getattr(out, '_queued_dev', -1)} at the device rate "
        f"{getattr(out, 'device_rate_hz', 0)} Hz, reopened {getattr(out, 'reopen_count', 0)} times, "
        f"{getattr(out, 'status_flags', 0)} callbacks with xrun flags"
    ]
    if turn is not None:
        lines.append(
            f"  speaking turn {turn.turn_id}: start {turn.start_pos}, end {turn.end_pos}, text done {turn.text_done}, "
            f"halted {turn.halted}, {len(turn.chunks)} chunks ending at {[c.end_pos for c in turn.chunks]}"
        )
    return lines


def _device_figures(app: Any) -> str:
    """Reopens and xruns of the real devices (the adapters' watchdogs reopen silently)."""
    mic, out = app.engines.audio_in, app.engines.audio_out
    return (
        f"devices: microphone reopened {getattr(mic, 'reopen_count', 0)} times by its watchdog, "
        f"{app.loop.device_reopens} times by the loop; speaker reopened {getattr(out, 'reopen_count', 0)} times; "
        f"callbacks with xrun flags: microphone {getattr(mic, 'status_flags', 0)}, speaker {getattr(out, 'status_flags', 0)}"
    )


def _memory_fill(app: App, config: AppConfig) -> float | None:
    """How full the main agent's conversation memory is (history tokens / budget); None without one.
    At least 1.0 once it dropped a block of old turns: trimmed in blocks, the history never holds
    more than the budget, and the longest prompt has run."""
    from edgevox.agents.llm_agent import LLMAgent

    agent = app.agents.get(config.main_agent)
    if not isinstance(agent, LLMAgent) or not agent.memory.token_budget:
        return None
    memory = agent.memory
    history = memory.history(config.voice.session_id)
    fill = sum(memory.count_tokens(str(m.get("content", ""))) + 4 for m in history) / memory.token_budget
    return max(fill, 1.0) if memory.trims(config.voice.session_id) else fill


def _describe(event: Any) -> str:
    """One short line for an event: clock, kind, turn, its main text or status."""
    parts = [f"{time.strftime('%H:%M:%S')}.{int(time.time() * 1000) % 1000:03d}", type(event).__name__]
    turn_id = getattr(event, "turn_id", 0)
    if turn_id:
        parts.append(f"turn {turn_id}")
    for name in ("status", "state", "stop_phrase", "ignored", "name", "text", "error", "reason"):
        value = getattr(event, name, None)
        if value not in (None, "", False):
            parts.append(f"{name}={str(value)[:60]!r}")
    return " ".join(parts)
