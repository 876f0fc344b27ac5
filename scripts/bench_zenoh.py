"""Blackboard request/reply across two Zenoh sessions on loopback vs in one process (same run).

    python scripts/bench_zenoh.py [N]

Two peer sessions with explicit tcp/127.0.0.1 endpoints and scouting off; nothing leaves
this machine. The baseline is the same request answered by a watcher in the same process.

    python scripts/bench_zenoh.py --flood N --size BYTES [--stuck] [--max-payload BYTES]

Memory under a flood: a second process (raw Zenoh, this script with ``--attacker``) puts N
``control.interrupt`` events of BYTES each on a bridge in this process and the script prints
this process's resident memory before and after (peak), and the bridge's counters.
``--stuck`` blocks the bus handler of interrupts for the whole flood (the inbox worker is
stuck, so queued events pile up in the bridge); without it the worker runs free.
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import threading
import time

from edgevox.integrations.config import ZenohBridgeConfig
from edgevox.integrations.zenoh_bridge import ZenohBridge
from edgevox.runtime.blackboard import Blackboard, Request
from edgevox.runtime.bus import EventBus


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answer(board: Blackboard):
    def watcher(_key: str, _old: object, new: object) -> None:
        if isinstance(new, Request):
            board.reply_to(new, {"ok": new.task})

    return watcher


def timed_requests(board: Blackboard, key: str, n: int) -> tuple[float, float]:
    """(p50, p95) in milliseconds of ``n`` sequential requests on ``key``."""
    times_ms = []
    for i in range(n):
        start = time.perf_counter()
        board.post_request(key, i, timeout=5).result(5)
        times_ms.append((time.perf_counter() - start) * 1000)
    times_ms.sort()
    return statistics.median(times_ms), times_ms[int(0.95 * (n - 1))]


def main(n: int = 300) -> None:
    port = free_port()
    bus_a, bus_b = EventBus("a"), EventBus("b")
    board_a, board_b = Blackboard(name="a"), Blackboard(name="b")
    listen = ZenohBridgeConfig(
        enabled=True, namespace="edgevox/bench", listen=[f"tcp/127.0.0.1:{port}"], forward_requests=["plan"]
    )
    connect = ZenohBridgeConfig(
        enabled=True,
        namespace="edgevox/bench",
        connect=[f"tcp/127.0.0.1:{port}"],
        serve_blackboard=True,
        serve_keys=["plan"],
    )
    a = ZenohBridge(bus_a, listen, blackboard=board_a, bridge_id="a")
    b = ZenohBridge(bus_b, connect, blackboard=board_b, bridge_id="b")
    board_b.watch("plan", answer(board_b))  # the peer answers forwarded requests
    board_a.watch("local", answer(board_a))  # baseline: answered in this process
    a.start(), b.start()
    try:
        if not a.wait_for_peers(1, 10):
            raise SystemExit("the two Zenoh sessions did not connect within 10 s")
        timed_requests(board_a, "plan", 20)  # warm up the route
        local = timed_requests(board_a, "local", n)
        remote = timed_requests(board_a, "plan", n)
    finally:
        a.stop(), b.stop()
        bus_a.close(), bus_b.close(), board_a.close(), board_b.close()
    print(f"blackboard request/reply in one process   : p50 {local[0]:.3f} ms  p95 {local[1]:.3f} ms  (baseline)")
    print(f"forwarded over Zenoh (2 sessions, loopback): p50 {remote[0]:.3f} ms  p95 {remote[1]:.3f} ms")
    print(f"ratio Zenoh / in-process (p50)             : {remote[0] / local[0]:.0f}x")


def rss_mb() -> tuple[float, float]:
    """(current, peak) resident memory of this process in MB, from /proc/self/status."""
    fields = dict(line.split(":", 1) for line in open("/proc/self/status", encoding="ascii"))
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def attacker(port: int, count: int, size: int) -> None:
    """Child process: put ``count`` interrupts of ``size`` bytes, then print DONE."""
    import zenoh

    conf = zenoh.Config()
    for path, value in (
        ("mode", "peer"),
        ("listen/endpoints", []),
        ("connect/endpoints", [f"tcp/127.0.0.1:{port}"]),
        ("connect/exit_on_failure", True),
        ("scouting/multicast/enabled", False),
        ("scouting/gossip/enabled", False),
        ("transport/shared_memory/enabled", False),
    ):
        conf.insert_json5(path, json.dumps(value))
    session = zenoh.open(conf)
    seen = threading.Event()
    session.liveliness().declare_subscriber("edgevox/flood/bridges/*", lambda _s: seen.set(), history=True)
    if not seen.wait(30):
        raise SystemExit("the bridge never appeared")
    event = {"kind": "control.interrupt", "reason": "x" * size}
    data = json.dumps({"v": 1, "origin": "attacker", "event": event}).encode()
    for _ in range(count):
        session.put("edgevox/flood/events/control.interrupt", data, congestion_control=zenoh.CongestionControl.BLOCK)
    print("DONE", flush=True)
    session.close()


def flood(count: int, size: int, stuck: bool, max_payload: int | None) -> None:
    from edgevox.runtime.events import InterruptEvent

    port = free_port()
    bus = EventBus("flood")
    options = {"max_control_per_s": 1e6, "max_payload_bytes": max_payload}
    known = ZenohBridgeConfig.model_fields  # so the same script measures older versions too
    extra = {k: v for k, v in options.items() if k in known and v is not None}
    cfg = ZenohBridgeConfig(
        enabled=True,
        namespace="edgevox/flood",
        listen=[f"tcp/127.0.0.1:{port}"],
        subscribe_kinds=["control.*"],
        **extra,
    )
    gate = threading.Event()
    handled = [0]

    def on_interrupt(_event: object) -> None:
        handled[0] += 1
        if stuck:
            gate.wait(120)

    bus.subscribe(InterruptEvent, on_interrupt)
    bridge = ZenohBridge(bus, cfg, bridge_id="robot").start()
    before = rss_mb()[0]
    with open("/proc/self/clear_refs", "w", encoding="ascii") as f:
        f.write("5")  # reset the peak (VmHWM) to the current RSS
    started = time.monotonic()
    child = subprocess.run(
        [sys.executable, __file__, "--attacker", str(port), str(count), str(size)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    elapsed = time.monotonic() - started
    if "DONE" not in child.stdout:
        raise SystemExit(f"attacker failed: {child.stderr[-2000:]}")
    counters = getattr(bridge, "counters", None)
    if counters is not None:
        counters.wait_for(lambda c: sum(c[k] for k in ("received", "oversized", "rate_limited")) >= count, 60)
    else:  # before counters existed: wait until the flood has been taken in
        deadline = time.monotonic() + 60
        while bridge.received + bridge.rejected < count and time.monotonic() < deadline:
            time.sleep(0.05)
    after, peak = rss_mb()
    gate.set()
    stats = counters.snapshot() if counters is not None else {"received": bridge.received, "rejected": bridge.rejected}
    shown = {k: v for k, v in stats.items() if v}
    print(f"flood of {count} x {size:,} B interrupts ({'handler stuck' if stuck else 'handler free'}), {elapsed:.1f} s")
    print(f"RSS before {before:.0f} MB, after {after:.0f} MB, peak {peak:.0f} MB; handled {handled[0]}")
    print(f"counters {shown}")
    bridge.stop()
    bus.close()


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--attacker":
        attacker(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
        raise SystemExit(0)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("n", nargs="?", type=int, default=300, help="requests per measurement")
    parser.add_argument("--flood", type=int, help="interrupts to flood a bridge with (memory test)")
    parser.add_argument("--size", type=int, default=262_144, help="bytes of each flooded interrupt's reason")
    parser.add_argument("--stuck", action="store_true", help="block the interrupt handler during the flood")
    parser.add_argument("--max-payload", type=int, help="the bridge's max_payload_bytes (default: the config's)")
    args = parser.parse_args()
    if args.flood:
        flood(args.flood, args.size, args.stuck, args.max_payload)
    else:
        main(args.n)
