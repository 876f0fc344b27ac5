"""``edgevox bench soak``: the home robot driven for N minutes; memory, threads, fds, latency, lost turns.

The product runs as shipped: ``App.build(load_config("home_robot"))`` with the config's models
(Whisper, SmolLM2, Piper) and its voice loop, on a real audio device. A private PulseAudio
daemon with a null sink (:mod:`edgevox.testing.pulse`) is the room: the App's microphone is
the sink's monitor and its speaker is the sink, so the robot hears itself and the config's
echo guard is exercised as on a robot; a second output stream, the "user", plays recorded
human speech from ``../shared/speech`` into the same sink. Only two things are set for the
bench: the devices are named (``pulse`` at the sink's 16 kHz) and the simulated robot
drives slower (``--drive-speed-m-s``), so a spoken stop can catch a drive in the middle.

The script (:data:`~edgevox.cli.bench_soak_driver.SCRIPT`) repeats until the time is up:
spoken and typed commands (one starts the ``go_to`` skill, which a spoken "stop" then halts
mid-drive), questions and chit-chat, speech over a reply (a barge-in; under half-duplex only
"stop" may cut in, so both are tried), an interrupt published on the bus as a ROS or Zenoh
peer would, an announcement and a noise clip. Each step waits for the loop to be idle, then for
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

Modules: this one is the command and the run (build, drive, sample, interval lines);
:mod:`~edgevox.cli.bench_soak_driver` is the user (the script and its clips),
:mod:`~edgevox.cli.bench_soak_ledger` counts turns, latencies and errors from the bus, and
:mod:`~edgevox.cli.bench_soak_report` samples the process and writes the summary and verdict.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import threading
import time
import tracemalloc
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from edgevox.cli.args import SECONDS, number, whole
from edgevox.cli.bench_soak_driver import SINK_RATE_HZ, Driver, load_clips
from edgevox.cli.bench_soak_ledger import Counts, TurnLedger
from edgevox.cli.bench_soak_report import Sample, SoakReport, p95, sample_process
from edgevox.errors import ConfigError

if TYPE_CHECKING:
    from edgevox.app import App
    from edgevox.config.schema import AppConfig

DEFAULT_SPEECH_DIR = Path(__file__).resolve().parents[3] / "shared" / "speech"


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
        if self.args.diagnose:
            # The snapshot keeps one record per live allocation (hundreds of MB with spaCy and
            # WordNet loaded) for the rest of the run: taken before the warm-up sample, so the
            # growth reported is the product's and not the bench's own.
            self._snapshot = tracemalloc.take_snapshot()
            self._types = _type_counts()
            self._sample()
        self.warm = self.samples[-1]
        memory = "" if memory_fill is None else f"; conversation memory {100 * memory_fill:.0f} % of its token budget"
        self._print(f"warm-up ended at {self.warm.t_s / 60:.1f} min: RSS {self.warm.rss_mb:.1f} MB{memory}")

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
            f"latency p50 {1000 * statistics.median(lat):.0f} ms p95 {1000 * p95(lat):.0f} ms (n {len(lat)})"
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


def _type_counts() -> Counter:
    gc.collect()
    return Counter(type(o).__qualname__ for o in gc.get_objects())


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
