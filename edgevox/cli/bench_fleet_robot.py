"""The processes of ``edgevox bench fleet``: a robot, and a commander that starts a skill on it;
and the operator's handles on them (:class:`Robot`, :class:`Fleet`: N robot processes and one
operator bridge reaching all of them).

    python -m edgevox.cli.bench_fleet_robot robot --name r1 --listen tcp/127.0.0.1:7447
    python -m edgevox.cli.bench_fleet_robot commander --name c1 --robot r1 --connect tcp/127.0.0.1:7447

A **robot** is a real :class:`~edgevox.runtime.runtime.Runtime` with a Zenoh bridge in namespace
``edgevox/fleet/<name>`` of the fleet ``edgevox/fleet`` (subscribing ``control.*`` and ``bench.*``,
publishing ``bench.*`` and ``agent.skill_state``). On ``bench.go`` it runs a skill: an activity
registered with the runtime, reported as a goal (``agent.skill_state`` running), that runs until
cancelled, then publishes ``bench.cancelled`` with the monotonic time of the cancel and why
(``CLOCK_MONOTONIC`` is shared by the processes of one machine). It answers ``bench.ping`` with
``bench.pong`` and takes ``bench.blob`` (ordinary data that fills a link). It prints ``READY``.

A **commander** connects to one robot, sends ``bench.go``, prints ``STARTED`` when the robot
says the skill runs, then waits to be killed (the dead-man fault).
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, ClassVar

from edgevox.agents.events import SkillStateEvent
from edgevox.integrations.config import ZenohBridgeConfig
from edgevox.integrations.zenoh_bridge import ZenohBridge
from edgevox.runtime.events import Event
from edgevox.runtime.runtime import Runtime


@dataclass(kw_only=True)
class BenchGo(Event):
    """Start the robot's skill."""

    kind: ClassVar[str] = "bench.go"


@dataclass(kw_only=True)
class BenchStarted(Event):
    """The robot's skill runs."""

    kind: ClassVar[str] = "bench.started"
    robot: str = ""


@dataclass(kw_only=True)
class BenchCancelled(Event):
    """The robot's skill was cancelled at ``at`` (``time.monotonic()``) because of ``reason``."""

    kind: ClassVar[str] = "bench.cancelled"
    robot: str = ""
    at: float = 0.0
    reason: str = ""


@dataclass(kw_only=True)
class BenchPing(Event):
    kind: ClassVar[str] = "bench.ping"
    n: int = 0


@dataclass(kw_only=True)
class BenchPong(Event):
    kind: ClassVar[str] = "bench.pong"
    robot: str = ""
    n: int = 0
    blobs: int = 0
    """``bench.blob`` events this robot received so far."""
    running: int = 0
    """Activities running on the robot now."""
    lost: int = 0
    """Events its bridge counted as lost on the way or dropped from its inbox."""


@dataclass(kw_only=True)
class BenchBlob(Event):
    """Ordinary data, to fill a link."""

    kind: ClassVar[str] = "bench.blob"
    data: str = ""


FLEET = "edgevox/fleet"


def namespace(robot: str) -> str:
    return f"{FLEET}/{robot}"


def bridge_config(
    robot: str, *, listen: list[str] | None = None, connect: list[str] | None = None, lease_s: float = 10.0
) -> ZenohBridgeConfig:
    """A robot's bridge (``listen``: it takes stops, also those put on the fleet's namespace) or a
    commander's in the robot's own namespace (``connect``: it sends them)."""
    return ZenohBridgeConfig(
        enabled=True,
        namespace=namespace(robot),
        fleet=FLEET if listen else "",
        listen=listen or [],
        connect=connect or [],
        publish_kinds=["bench.*", "agent.skill_state"] if listen else ["bench.*"],
        subscribe_kinds=["control.*", "bench.*"] if listen else ["bench.*", "agent.skill_state"],
        lease_s=lease_s,
        max_payload_bytes=1 << 20,
    )


def operator_config(connect: list[str], lease_s: float = 10.0) -> ZenohBridgeConfig:
    """The operator's one bridge: it reaches every robot under the fleet's namespace."""
    return ZenohBridgeConfig(
        enabled=True,
        namespace=FLEET,
        robots="*",
        connect=connect,
        publish_kinds=["bench.*"],
        subscribe_kinds=["bench.*", "agent.skill_state"],
        lease_s=lease_s,
        max_payload_bytes=1 << 20,
    )


def run_robot(args: argparse.Namespace) -> int:
    runtime = Runtime(f"robot-{args.name}").start()
    bus = runtime.bus
    go = threading.Event()

    def skill() -> None:
        while True:
            go.wait()
            go.clear()
            activity = runtime.activities.start("skill", "drive")
            goal = f"{args.name}-{activity.id}"
            bus.publish(SkillStateEvent(source=args.name, skill="drive", goal_id=goal, state="running"))
            bus.publish(BenchStarted(source=args.name, robot=args.name))
            activity.token.wait()
            at = time.monotonic()
            activity.finish()
            bus.publish(SkillStateEvent(source=args.name, skill="drive", goal_id=goal, state="cancelled"))
            bus.publish(BenchCancelled(source=args.name, robot=args.name, at=at, reason=activity.token.reason))

    blobs = [0]
    bridges: list[ZenohBridge] = []

    def pong(event: Event) -> None:
        counters = bridges[0].counters if bridges else None
        lost = counters["data_lost"] + counters["inbox_dropped"] if counters is not None else 0
        n = event.n if isinstance(event, BenchPing) else 0
        bus.publish(
            BenchPong(
                source=args.name, robot=args.name, n=n, blobs=blobs[0], lost=lost, running=len(runtime.activities)
            )
        )

    bus.subscribe(BenchGo, lambda _e: go.set())
    bus.subscribe(BenchBlob, lambda _e: blobs.__setitem__(0, blobs[0] + 1))
    bus.subscribe(BenchPing, pong)
    threading.Thread(target=skill, name="bench-skill", daemon=True).start()
    bridge = ZenohBridge(
        bus,
        bridge_config(args.name, listen=[args.listen], lease_s=args.lease),
        activities=runtime.activities,
        bridge_id=args.name,
    ).start()
    bridges.append(bridge)
    print("READY", flush=True)
    sys.stdin.read()  # until the bench closes our stdin (or kills us)
    bridge.stop()
    runtime.stop()
    return 0


def run_commander(args: argparse.Namespace) -> int:
    runtime = Runtime(f"commander-{args.name}").start()
    started = threading.Event()
    runtime.bus.subscribe(BenchStarted, lambda _e: started.set())
    bridge = ZenohBridge(
        runtime.bus, bridge_config(args.robot, connect=[args.connect], lease_s=args.lease), bridge_id=args.name
    ).start()
    if not bridge.wait_for_peers(1, 20):
        print("NO_ROBOT", flush=True)
        return 1
    runtime.bus.publish(BenchGo(source=args.name))
    print("STARTED" if started.wait(20) else "NOT_STARTED", flush=True)
    sys.stdin.read()
    return 0


# -- the operator's side: handles on robot processes --------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def proc_status(pid: int | str) -> tuple[float, int]:
    """(RSS in MB, OS threads) of a process from ``/proc``."""
    rss_kb = threads = 0
    with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss_kb = int(line.split()[1])
            elif line.startswith("Threads:"):
                threads = int(line.split()[1])
    return rss_kb / 1024, threads


class Robot:
    """One robot process, and what the operator heard from it."""

    def __init__(self, name: str) -> None:

        self.name = name
        self.namespace = namespace(name)
        self.endpoint = f"tcp/127.0.0.1:{free_port()}"
        cmd = [
            sys.executable,
            "-m",
            "edgevox.cli.bench_fleet_robot",
            "robot",
            "--name",
            name,
            "--listen",
            self.endpoint,
        ]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        if self.proc.stdout.readline().strip() != "READY":
            raise RuntimeError(f"robot {name} did not start")
        self.fleet: Fleet | None = None
        self.cond = threading.Condition()
        self.pongs: set[int] = set()
        self.last_pong: Any = None
        self.started = 0
        self.cancelled: list[float] = []
        self.lost_goals: list[tuple[str, float]] = []

    def heard(self, event: Any) -> None:
        """Operator's bus: an event this robot sent."""

        with self.cond:
            if isinstance(event, BenchPong):
                self.pongs.add(event.n)
                self.last_pong = event
            elif isinstance(event, BenchStarted):
                self.started += 1
            elif isinstance(event, BenchCancelled):
                self.cancelled.append(event.at)
            elif getattr(event, "state", "") == "lost":
                self.lost_goals.append((event.goal_id, time.monotonic()))
            self.cond.notify_all()

    def send(self, event: Any) -> None:
        """A data event to this robot alone, on the operator's one bridge."""
        assert self.fleet is not None
        self.fleet.bridge.send(event, namespace=self.namespace)

    def wait(self, predicate: Any, timeout_s: float) -> bool:
        with self.cond:
            return self.cond.wait_for(predicate, timeout_s)

    def fresh_pong(self, base: int) -> Any:
        """The robot's answer to a ping sent now. A ping and its pong are data, which a congested
        link may drop (and count): the ping is sent again, up to 20 times, until one is answered."""

        for n in range(base, base + 20):
            self.send(BenchPing(source="operator", n=n))
            if self.wait(lambda n=n: n in self.pongs, 1.0):
                return self.last_pong
        raise RuntimeError(f"robot {self.name} answered none of 20 pings")

    def start_skill(self) -> bool:

        before = self.started
        self.send(BenchGo(source="operator"))
        return self.wait(lambda: self.started > before, 10)

    def close(self) -> None:
        if self.proc.poll() is None:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class Fleet:
    """N robot processes and the operator: one bus and one bridge (``robots: "*"``) for all of them."""

    def __init__(self, count: int) -> None:
        from edgevox.integrations.serialization import remote_origin
        from edgevox.integrations.zenoh_bridge import ZenohBridge
        from edgevox.runtime.bus import EventBus

        self.robots: list[Robot] = []
        try:
            for i in range(count):
                self.robots.append(Robot(f"r{i + 1}"))
        except BaseException:
            for robot in self.robots:
                robot.close()
            raise
        by_name = {robot.name: robot for robot in self.robots}
        for robot in self.robots:
            robot.fleet = self
        self.bus = EventBus("operator")
        self.bus.subscribe(
            ("bench.*", "agent.skill_state"),
            lambda e: by_name[remote_origin(e) or ""].heard(e) if (remote_origin(e) or "") in by_name else None,
        )
        self.bridge = ZenohBridge(
            self.bus, operator_config([r.endpoint for r in self.robots]), bridge_id="operator"
        ).start()
        if not self.bridge.wait_for_peers(count, 20):
            self.close()
            raise RuntimeError(f"{count} robots not reachable: {sorted(self.bridge.peers)}")

    def close(self) -> None:
        self.bridge.stop()
        self.bus.close()
        for robot in self.robots:
            robot.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m edgevox.cli.bench_fleet_robot")
    sub = parser.add_subparsers(dest="role", required=True)
    robot = sub.add_parser("robot")
    robot.add_argument("--name", required=True)
    robot.add_argument("--listen", required=True)
    robot.add_argument("--lease", type=float, default=10.0)
    robot.set_defaults(func=run_robot)
    commander = sub.add_parser("commander")
    commander.add_argument("--name", required=True)
    commander.add_argument("--robot", required=True)
    commander.add_argument("--connect", required=True)
    commander.add_argument("--lease", type=float, default=10.0)
    commander.set_defaults(func=run_commander)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
