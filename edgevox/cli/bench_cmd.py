"""``edgevox bench ...``: benchmarks. ``bench runtime`` lives here; other groups add theirs.

``register`` adds the ``bench`` parser with its own sub-commands. ``bench latency``
(voice loop) is added by ``edgevox.cli.bench_latency.add_latency_parser`` when that
module is importable, so each benchmark stays in its owner's module.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
from typing import Any

from edgevox.cli.args import COUNT, SECONDS, number


def register(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("bench", help="run benchmarks (runtime, stop, latency, soak)")
    bench = parser.add_subparsers(dest="bench", metavar="BENCH")
    add_runtime_parser(bench)
    from edgevox.cli.bench_stop import add_stop_parser

    add_stop_parser(bench)
    from edgevox.cli.bench_spoken_stop import add_spoken_stop_parser

    add_spoken_stop_parser(bench)
    from edgevox.cli.bench_soak import add_soak_parser

    add_soak_parser(bench)
    from edgevox.cli.bench_fleet import add_fleet_parser

    add_fleet_parser(bench)
    try:
        latency = importlib.import_module("edgevox.cli.bench_latency")
    except ModuleNotFoundError as exc:
        if exc.name != "edgevox.cli.bench_latency":
            raise
    else:
        latency.add_latency_parser(bench)
    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])
    return parser


def add_runtime_parser(bench_subparsers: Any) -> argparse.ArgumentParser:
    p = bench_subparsers.add_parser(
        "runtime",
        help="EventBus throughput vs queue.Queue, and control-event latency under a data flood",
    )
    p.add_argument("--events", type=COUNT, default=200_000, help="events per throughput run (default 200000)")
    p.add_argument("--repeats", type=COUNT, default=3, help="throughput runs; the best is reported (default 3)")
    p.add_argument("--flood-hz", type=number(high=1e7), default=50_000, help="data events/s during the latency run")
    p.add_argument("--duration-s", type=SECONDS, default=3.0, help="length of the latency run in seconds")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    p.set_defaults(func=run_runtime)
    return p


def run_runtime(args: argparse.Namespace) -> int:
    from edgevox.runtime.bench import control_latency, throughput

    tp = throughput(args.events, repeats=args.repeats)
    lat = control_latency(args.flood_hz, args.duration_s)
    result = {"cpus": os.cpu_count(), "load_avg_1m": os.getloadavg()[0], "throughput": tp, "control_latency": lat}
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"machine: {result['cpus']} CPUs visible, load average (1 min) {result['load_avg_1m']:.2f}")
    print(f"publish -> 1 queued subscriber : {tp['bus_events_per_s']:>12,.0f} events/s   (target >= 300,000)")
    print(f"queue.Queue -> 1 consumer      : {tp['queue_events_per_s']:>12,.0f} events/s   (baseline, same run)")
    print(f"ratio bus / queue.Queue        : {tp['ratio_vs_queue']:>12.2f}")
    print(
        f"control latency under {lat['flood_actual_per_s']:,.0f} data events/s: "
        f"p50 {lat['p50_ms']:.3f} ms, p99 {lat['p99_ms']:.3f} ms, max {lat['max_ms']:.3f} ms "
        f"({lat['control_events']} control events; target p99 < 1 ms)"
    )
    return 0
