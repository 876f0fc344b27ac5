"""``edgevox bench fleet``: N robot processes and one operator on loopback, and the fleet's faults.

For each N in ``--robots`` (default 1,2,4,8) it starts N robot processes
(:mod:`edgevox.cli.bench_fleet_robot`: a real runtime with a Zenoh bridge and a skill) and,
in this process, the operator: one bus and one bridge (``robots: "*"``) reaching all of them, and
prints:

* round trip to all robots (a ``bench.ping`` to each, until every ``bench.pong``), p50/p99;
* throughput: pings answered per second, all robots at once;
* RSS and threads of the operator and of each robot process;
* stop to all cancelled: every robot runs its skill, the operator calls ``safety_stop`` once
  (one put on the fleet's namespace); the time until the last robot acknowledged (a robot
  acknowledges after its runtime cancelled the skill), p50/p99;

and once, at the largest N, the fault table:

* **paused robot, full link**, first as a baseline with Zenoh's default QoS for the stops (a raw
  session, no control lane: how many reached the robot), then through the bridge: robot 1 is frozen (SIGSTOP) with its skill running, the operator
  queues ``--blob-mb`` of ordinary data towards it and sends ``--stops`` stops, then it resumes
  after ``--pause-s``: how many stops were acknowledged in time, late, or reported unreachable,
  how many were silently lost (none of the three: must be 0), and whether the skill ended;
* **killed operator**: a commander process starts robot 1's skill and is killed (SIGKILL): the
  time until the robot's dead-man cancelled the skill;
* **killed robot**: robot 1 is killed while its skill runs; a stop must report it ``unreachable``
  and the operator must mark its goal ``lost``;
* **burst to one robot** (N >= 2): round trips to the other robots while ``--blob-mb`` go to
  robot 1, against the same without the burst;
* data lost on the way, and whether every loss was counted.

* **ROS 2 junk-cancel flood** (real rclpy, ``bench_fleet_ros.py``): a node publishes 500 junk
  cancels, then cancels its own running goal: answered or not, and how fast.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
import time
from typing import TYPE_CHECKING, Any

from edgevox.cli.args import COUNT, SECONDS

if TYPE_CHECKING:  # imported where used: building the CLI's parser must not load the bridge
    from edgevox.cli.bench_fleet_robot import Fleet, Robot


def add_fleet_parser(bench_subparsers: Any) -> argparse.ArgumentParser:
    p = bench_subparsers.add_parser("fleet", help="robots and an operator over Zenoh on loopback: stops and faults")
    p.add_argument("--robots", default="1,2,4,8", help="robot counts, comma-separated (default 1,2,4,8)")
    p.add_argument("--trials", type=COUNT, default=50, help="round trips and stops per N (default 50)")
    p.add_argument("--stops", type=COUNT, default=100, help="stops sent to the paused robot (default 100)")
    p.add_argument("--pause-s", type=SECONDS, default=3.0, help="how long the robot is frozen (default 3 s)")
    p.add_argument("--blob-mb", type=COUNT, default=8, help="data queued towards the paused robot, MB (default 8)")
    p.set_defaults(func=run_fleet)
    return p


def _pct(values: list[float], q: float) -> float:
    from edgevox.voice.latency import percentile

    return percentile(values, q) if values else float("nan")


def round_trips(fleet: Fleet, robots: list[Robot], trials: int, start: int = 0) -> list[float]:
    """Seconds until every robot in ``robots`` answered one ping (one put on the fleet's
    namespace when it is the whole fleet, else one to each), per trial."""
    from edgevox.cli.bench_fleet_robot import BenchPing

    out = []
    for n in range(start + 1, start + trials + 1):
        t0 = time.perf_counter()
        if len(robots) == len(fleet.robots):
            fleet.bus.publish(BenchPing(source="operator", n=n))
        else:
            for r in robots:
                r.send(BenchPing(source="operator", n=n))
        if all(r.wait(lambda r=r, n=n: n in r.pongs, 5) for r in robots):
            out.append(time.perf_counter() - t0)
    return out


def throughput(fleet: Fleet, count: int = 2000) -> float:
    """Pings answered per second, ``count`` to each robot sent at once."""
    from edgevox.cli.bench_fleet_robot import BenchPing

    base = 10_000_000
    t0 = time.perf_counter()
    for n in range(base, base + count):
        for r in fleet.robots:
            r.send(BenchPing(source="operator", n=n))
    for r in fleet.robots:
        r.wait(lambda r=r: len([p for p in r.pongs if p >= base]) >= count, 30)
    elapsed = time.perf_counter() - t0
    return sum(len([p for p in r.pongs if p >= base]) for r in fleet.robots) / elapsed


def stop_all(fleet: Fleet) -> float | None:
    """Seconds from the stop until the last robot acknowledged (None: one did not in time)."""
    if not all(r.start_skill() for r in fleet.robots):
        return None
    delivery = fleet.bridge.safety_stop("bench stop")
    if not delivery.delivered:
        return None
    return max(delivery.latency_s(p) or 0.0 for p in delivery.expected)


def paused_robot(fleet: Fleet, robot: Robot, stops: int, pause_s: float, blob_mb: int) -> dict[str, Any]:
    from edgevox.cli.bench_fleet_robot import BenchBlob

    robot.start_skill()
    before = robot.fresh_pong(19_000_000)
    os.kill(robot.proc.pid, signal.SIGSTOP)
    t0 = time.monotonic()
    chunk = "x" * 65_536
    for _ in range(blob_mb * 16):
        robot.send(BenchBlob(source="operator", data=chunk))
    deliveries = [fleet.bridge.safety_stop(f"paused {i}", timeout_s=0) for i in range(stops)]
    time.sleep(max(0.0, pause_s - (time.monotonic() - t0)))  # the fault: the robot is frozen this long
    os.kill(robot.proc.pid, signal.SIGCONT)
    for d in deliveries:
        d.wait(max(0.1, t0 + pause_s + 30 - time.monotonic()))
    after = robot.fresh_pong(21_000_000)  # also a last sample after the burst, so its gaps show
    ended = after.running == 0  # from the robot's own registry (its bench.cancelled is data: it may be lost)
    blobs = blob_mb * 16
    got, lost = after.blobs - before.blobs, after.lost - before.lost
    statuses = [d.peers.get(robot.name, "unreachable") for d in deliveries]
    late = [t for t in (d.latency_s(robot.name) for d in deliveries) if t is not None]
    others = [status for d in deliveries for peer, status in d.peers.items() if peer != robot.name]
    return {
        "others": f"{others.count('stopped')} of {len(others)}",
        "stopped": statuses.count("stopped"),
        "late": statuses.count("late"),
        "unreachable": statuses.count("unreachable"),
        "lost": statuses.count("pending"),
        "ack_max_s": max(late) if late else float("nan"),
        "skill_ended": ended,
        "data": f"{blobs} data events sent: {got} arrived and {lost} counted lost by the robot "
        f"(uncounted: {blobs - got - lost})",
    }


def paused_robot_baseline(robot: Robot, stops: int, pause_s: float, blob_mb: int) -> int:
    """The same fault with Zenoh's defaults for the stops (drop when full, normal priority), from a
    raw session: how many of ``stops`` the robot acknowledged (it acknowledges every stop it gets)."""
    import json

    import zenoh

    from edgevox.cli.bench_fleet_robot import BenchBlob, namespace
    from edgevox.integrations.serialization import encode_event
    from edgevox.runtime.events import StopEvent

    conf = zenoh.Config()
    for path, value in (
        ("mode", "peer"),
        ("scouting/multicast/enabled", False),
        ("connect/endpoints", [robot.endpoint]),
        ("listen/endpoints", []),
    ):
        conf.insert_json5(path, json.dumps(value))
    ns = namespace(robot.name)
    acked: set[str] = set()
    cond = threading.Condition()

    def on_ack(sample: Any) -> None:
        with cond:
            acked.add(json.loads(sample.payload.to_bytes())["stop_id"])
            cond.notify_all()

    session = zenoh.open(conf)
    try:
        session.declare_subscriber(f"{ns}/acks/baseline", on_ack)
        seen = threading.Event()
        session.liveliness().declare_subscriber(f"{ns}/bridges/*", lambda _s: seen.set(), history=True)
        seen.wait(10)
        robot.start_skill()
        os.kill(robot.proc.pid, signal.SIGSTOP)
        t0 = time.monotonic()
        blob = encode_event(BenchBlob(source="baseline", data="x" * 65_536), "baseline")
        for _ in range(blob_mb * 16):
            session.put(f"{ns}/events/bench.blob", blob)
        for i in range(stops):
            session.put(
                f"{ns}/events/control.stop", encode_event(StopEvent(reason="baseline", stop_id=f"b{i}"), "baseline")
            )
        time.sleep(max(0.0, pause_s - (time.monotonic() - t0)))  # the fault: the robot is frozen this long
        os.kill(robot.proc.pid, signal.SIGCONT)
        with cond:
            cond.wait_for(lambda: len(acked) >= stops, 10)  # whatever arrived is acknowledged within this
            return len(acked)
    finally:
        session.close()


def killed_operator(robot: Robot) -> float | None:
    """Seconds from SIGKILL of a commander until the robot's dead-man cancelled its skill."""
    cmd = [
        sys.executable, "-m", "edgevox.cli.bench_fleet_robot", "commander",
        "--name", "commander", "--robot", robot.name, "--connect", robot.endpoint,
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    if proc.stdout.readline().strip() != "STARTED":
        proc.kill()
        return None
    cancels = len(robot.cancelled)
    killed_at = time.monotonic()
    proc.kill()
    proc.wait()
    if not robot.wait(lambda: len(robot.cancelled) > cancels, 15):
        return None
    return robot.cancelled[cancels] - killed_at


def run_fleet(args: argparse.Namespace) -> int:
    try:
        counts = sorted({int(n) for n in str(args.robots).split(",")})
        if not counts or counts[0] < 1 or counts[-1] > 32:
            raise ValueError
    except ValueError:
        print(f"edgevox bench fleet: --robots {args.robots!r}: give robot counts from 1 to 32, e.g. 1,2,4,8")
        return 2
    from edgevox.cli.bench_fleet_robot import Fleet, proc_status

    print(
        "N  round trip p50/p99 ms  pings/s  operator RSS MB/threads  robot RSS MB/threads  stop->all cancelled p50/p99 ms"
    )
    for n in counts:
        fleet = Fleet(n)
        try:
            rtt = round_trips(fleet, fleet.robots, args.trials)
            rate = throughput(fleet)
            stops = [s for s in (stop_all(fleet) for _ in range(args.trials)) if s is not None]
            op = proc_status("self")
            rs = [proc_status(r.proc.pid) for r in fleet.robots]
            print(
                f"{n:<2} {_pct(rtt, 50) * 1000:7.1f} / {_pct(rtt, 99) * 1000:6.1f}   {rate:7.0f}  "
                f"{op[0]:8.0f} / {op[1]:<4}             {max(r[0] for r in rs):6.0f} / {max(r[1] for r in rs):<4}"
                f"          {_pct(stops, 50) * 1000:6.1f} / {_pct(stops, 99) * 1000:6.1f}"
                f"   ({len(stops)} of {args.trials} stops acknowledged by all)",
                flush=True,
            )
            if n == counts[-1]:
                faults(fleet, args)
        finally:
            fleet.close()
    return 0


def faults(fleet: Fleet, args: argparse.Namespace) -> None:
    robots = fleet.robots
    first, others = robots[0], robots[1:]
    print(f"\nfaults at N = {len(robots)}")
    print("inventory: " + "; ".join(peer.describe() for peer in fleet.bridge.robots()))
    if others:
        base = round_trips(fleet, others, args.trials, start=30_000_000)
        from edgevox.cli.bench_fleet_robot import BenchBlob

        chunk = "x" * 65_536

        def send_burst() -> None:
            for _ in range(args.blob_mb * 16):
                first.send(BenchBlob(source="operator", data=chunk))

        burst = threading.Thread(target=send_burst, name="bench-burst")
        burst.start()
        during = round_trips(fleet, others, args.trials, start=40_000_000)
        burst.join()
        print(
            f"burst of {args.blob_mb} MB to one robot: the others' round trip p99 "
            f"{_pct(base, 99) * 1000:.1f} ms without, {_pct(during, 99) * 1000:.1f} ms during "
            f"(+{(_pct(during, 99) - _pct(base, 99)) * 1000:.1f} ms)"
        )
    baseline = paused_robot_baseline(first, args.stops, args.pause_s, args.blob_mb)
    print(
        f"baseline, the same fault with Zenoh's default QoS for the stops: {baseline} of {args.stops} stops "
        f"reached the robot"
    )
    paused = paused_robot(fleet, first, args.stops, args.pause_s, args.blob_mb)
    print(
        f"paused robot, {args.blob_mb} MB queued, {args.stops} stops: {paused['stopped']} stopped in time, "
        f"{paused['late']} acknowledged late (last {paused['ack_max_s']:.1f} s), {paused['unreachable']} reported "
        f"unreachable, {paused['lost']} silently lost; skill ended after resume: {paused['skill_ended']}; "
        f"the other robots: {paused['others']} stops acknowledged in time"
    )
    print(f"data to the paused robot: {paused['data']}")
    took = killed_operator(first)
    print(
        "killed operator: dead-man cancelled the robot's skill "
        + (f"{took * 1000:.0f} ms after the kill" if took is not None else "NOT within 15 s")
    )
    from edgevox.cli.bench_fleet_ros import junk_cancel_flood

    flood = junk_cancel_flood(trials=5, junk=500)
    if isinstance(flood, str):
        print(f"ROS 2 junk-cancel flood: {flood}")
    else:
        took = flood["latencies_s"]
        print(
            f"ROS 2 junk-cancel flood: {flood['answered']} of {flood['trials']} cancels of a running goal answered "
            f"'cancelled' through 500 junk cancels each ({flood['rate_limited']} junk rate-limited); cancel -> "
            f"result p50 {_pct(took, 50) * 1000:.1f} ms, max {max(took, default=float('nan')) * 1000:.1f} ms"
        )
    first.start_skill()
    lost_before = len(first.lost_goals)
    killed_at = time.monotonic()
    first.proc.kill()
    first.proc.wait()
    t0 = time.monotonic()  # the stop leaves at once: the robot is still listed, and must not stay "pending"
    gone = fleet.bridge.safety_stop("robot killed", timeout_s=15)
    print(
        f"killed robot: a stop reports {first.name} {gone.peers.get(first.name, 'not listed')} "
        f"{(time.monotonic() - t0) * 1000:.0f} ms after it is sent; "
        + (
            f"its running goal marked lost {(first.lost_goals[lost_before][1] - killed_at) * 1000:.0f} ms after "
            f"the kill"
            if first.wait(lambda: len(first.lost_goals) > lost_before, 15)
            else "its running goal was NOT marked lost within 15 s"
        )
    )
