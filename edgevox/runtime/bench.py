"""Runtime micro-benchmarks (used by ``edgevox bench runtime`` and ``scripts/bench_runtime.py``).

Library code: the functions return numbers, the CLI prints them.

* :func:`throughput` - events/s from ``publish`` to one queued subscriber's handler,
  and the same transfer through a plain ``queue.Queue`` to one consumer thread,
  measured in the same process, same events, back to back.
* :func:`control_latency` - p50/p99 of publish -> handler latency of control events
  while a paced thread floods the same queued subscriber with data events.
"""

from __future__ import annotations

import queue
import statistics
import threading
import time
from dataclasses import dataclass
from typing import Any, ClassVar

from edgevox.runtime.bus import EventBus
from edgevox.runtime.events import Event


@dataclass(kw_only=True)
class BenchData(Event):
    """A data event used only by the benchmark."""

    kind: ClassVar[str] = "bench.data"
    n: int = 0


@dataclass(kw_only=True)
class BenchControl(Event):
    """A control event used only by the benchmark; ``t0`` = perf_counter() at publish."""

    kind: ClassVar[str] = "bench.control"
    control: ClassVar[bool] = True
    t0: float = 0.0


def throughput(n_events: int = 200_000, max_queue: int = 100_000, repeats: int = 3) -> dict[str, Any]:
    """Best of ``repeats`` runs of: bus publish -> queued subscriber, and queue.Queue -> consumer."""
    bus_rates, queue_rates, dropped = [], [], 0
    for _ in range(repeats):
        rate, drops = _bus_run(n_events, max_queue)
        bus_rates.append(rate)
        dropped += drops
        queue_rates.append(_queue_run(n_events, max_queue))
    bus_best, queue_best = max(bus_rates), max(queue_rates)
    return {
        "events": n_events,
        "bus_events_per_s": bus_best,
        "queue_events_per_s": queue_best,
        "ratio_vs_queue": bus_best / queue_best,
        "dropped": dropped,
    }


def _bus_run(n_events: int, max_queue: int) -> tuple[float, int]:
    events = [BenchData(n=i) for i in range(n_events)]
    bus = EventBus("bench")
    done = threading.Event()
    count = 0

    def handler(_event: Event) -> None:
        nonlocal count
        count += 1
        if count == n_events:
            done.set()

    sub = bus.subscribe(BenchData, handler, queued=True, max_queue=max_queue, overflow="block", block_timeout_s=5.0)
    publish = bus.publish
    t0 = time.perf_counter()
    for event in events:
        publish(event)
    finished = done.wait(60)
    elapsed = time.perf_counter() - t0
    dropped = sub.dropped
    bus.close()
    if not finished:
        raise RuntimeError(f"bus benchmark: only {count} of {n_events} events arrived within 60 s")
    return n_events / elapsed, dropped


def _queue_run(n_events: int, max_queue: int) -> float:
    events = [BenchData(n=i) for i in range(n_events)]
    q: queue.Queue = queue.Queue(maxsize=max_queue)
    stop = object()

    def consumer() -> None:
        get = q.get
        while get() is not stop:
            pass

    thread = threading.Thread(target=consumer, name="edgevox-bench-queue", daemon=True)
    thread.start()
    put = q.put
    t0 = time.perf_counter()
    for event in events:
        put(event)
    put(stop)
    thread.join(60)
    return n_events / (time.perf_counter() - t0)


def control_latency(
    flood_events_per_s: float = 50_000, duration_s: float = 3.0, control_interval_s: float = 0.002
) -> dict[str, Any]:
    """Control-event latency (ms) to a queued subscriber that also receives a data flood."""
    bus = EventBus("bench-latency")
    latencies: list[float] = []
    data_seen = 0

    def handler(event: Event) -> None:
        nonlocal data_seen
        if isinstance(event, BenchControl):
            latencies.append(time.perf_counter() - event.t0)
        else:
            data_seen += 1

    sub = bus.subscribe((BenchData, BenchControl), handler, queued=True, max_queue=100_000, name="bench-latency")
    stop = threading.Event()
    published = 0

    def flood() -> None:
        # Paced in 1 ms ticks: publish the events due so far, then wait for the next tick
        # (the wait releases the GIL, as a real audio or sensor thread would).
        nonlocal published
        start = time.perf_counter()
        while not stop.is_set():
            due = int((time.perf_counter() - start) * flood_events_per_s)
            while published < due:
                bus.publish(BenchData(n=published))
                published += 1
            stop.wait(0.001)

    flooder = threading.Thread(target=flood, name="edgevox-bench-flood", daemon=True)
    flooder.start()
    t_end = time.perf_counter() + duration_s
    sent = 0
    while time.perf_counter() < t_end:
        bus.publish(BenchControl(t0=time.perf_counter()))
        sent += 1
        stop.wait(control_interval_s)
    stop.set()
    flooder.join(5)
    elapsed = duration_s
    drained = threading.Event()
    bus.subscribe(BenchControl, lambda e: drained.set(), queued=True)  # noqa: B023
    # a last control event through the same subscriber marks that it caught up
    bus.publish(BenchControl(t0=time.perf_counter()))
    drained.wait(5)
    dropped = sub.dropped
    bus.close()
    lat_ms = sorted(x * 1000.0 for x in latencies[:sent])
    if not lat_ms:
        raise RuntimeError("latency benchmark: no control event arrived")
    return {
        "flood_target_per_s": flood_events_per_s,
        "flood_actual_per_s": published / elapsed,
        "control_events": len(lat_ms),
        "p50_ms": statistics.median(lat_ms),
        "p99_ms": lat_ms[min(len(lat_ms) - 1, int(0.99 * len(lat_ms)))],
        "max_ms": lat_ms[-1],
        "data_dropped": dropped,
    }
