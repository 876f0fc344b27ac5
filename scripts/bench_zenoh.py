"""Blackboard request/reply across two Zenoh sessions on loopback vs in one process (same run).

    python scripts/bench_zenoh.py [N]

Two peer sessions with explicit tcp/127.0.0.1 endpoints and scouting off; nothing leaves
this machine. The baseline is the same request answered by a watcher in the same process.
"""

from __future__ import annotations

import socket
import statistics
import sys
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
    connect = ZenohBridgeConfig(enabled=True, namespace="edgevox/bench", connect=[f"tcp/127.0.0.1:{port}"])
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


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 300)
