"""The soak bench's figures and verdict: this process's memory, threads and descriptors sampled
over the run, and the summary and targets printed at its end.
"""

from __future__ import annotations

import os
import statistics
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from edgevox.cli.bench_soak import Soak
    from edgevox.cli.bench_soak_driver import Driver
    from edgevox.cli.bench_soak_ledger import TurnLedger


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


def p95(values: list[float]) -> float:
    from edgevox.voice.latency import percentile

    return percentile(values, 95)


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
            (iv.end_s / 60, p95(iv.latencies_s))
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
                f"latency over the run: p50 {1000 * statistics.median(all_lat):.0f} ms, p95 {1000 * p95(all_lat):.0f} ms, "
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
