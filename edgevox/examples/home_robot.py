"""The home-robot demo: a simulated robot and the agent that drives it.

:class:`SimulatedRobot` is plain Python (no dependency): position, heading, room,
battery, lights per room, held object and timers, guarded by one lock because
tools run on the agent's thread and ``go_to`` on a skill worker.

The agent has exactly these tools: ``move``, ``turn``, ``go_to`` (a cancellable
skill), ``stop``, ``get_battery``, ``set_light``, ``pick_up``, ``set_timer``.
Anything else is answered in words. The docstrings below are the *only* place
where demo-specific wording lives: the schema resolver and the grammar read them.

Build the agent with :func:`build_home_robot_agent` (the config loader calls the
same function for ``agent: home_robot``).
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from edgevox.agents.skills import GoalHandle, skill
from edgevox.agents.tools import tool

Room = Literal["kitchen", "living room", "bedroom", "bathroom", "office", "charging dock"]
LightRoom = Literal["kitchen", "living room", "bedroom", "bathroom", "office"]

ROOM_POSITIONS_M: dict[str, tuple[float, float]] = {
    "charging dock": (0.0, 0.0),
    "living room": (3.0, 0.0),
    "kitchen": (6.0, 2.0),
    "bedroom": (2.0, 6.0),
    "bathroom": (5.0, 6.0),
    "office": (-3.0, 3.0),
}


@dataclass
class Timer:
    minutes: float
    started_at_s: float


@dataclass
class SimulatedRobot:
    """State of the simulated robot. All methods are thread-safe."""

    x_m: float = 0.0
    y_m: float = 0.0
    heading_deg: float = 0.0
    room: str = "charging dock"
    battery_pct: float = 87.0
    lights: dict[str, bool] = field(default_factory=lambda: dict.fromkeys(ROOM_POSITIONS_M, False))
    held_object: str | None = None
    timers: list[Timer] = field(default_factory=list)
    speed_m_s: float = 2.0
    """Simulated driving speed for ``go_to`` (fast, so the demo and tests stay quick)."""
    stopped_count: int = 0
    _lock: threading.RLock = field(default_factory=threading.RLock, repr=False)
    _goals: list[GoalHandle] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        self.lights.pop("charging dock", None)

    def drive(self, distance_m: float) -> None:
        with self._lock:
            rad = math.radians(self.heading_deg)
            self.x_m += distance_m * math.cos(rad)
            self.y_m += distance_m * math.sin(rad)
            self.battery_pct = max(0.0, self.battery_pct - 0.2 * abs(distance_m))
            self.room = self._nearest_room()

    def rotate(self, degrees: float) -> None:
        with self._lock:
            self.heading_deg = (self.heading_deg + degrees) % 360.0

    def _nearest_room(self) -> str:
        return min(ROOM_POSITIONS_M, key=lambda r: math.dist(ROOM_POSITIONS_M[r], (self.x_m, self.y_m)))

    def track(self, goal: GoalHandle) -> None:
        with self._lock:
            self._goals = [g for g in self._goals if not g.done] + [goal]

    def cancel_goals(self, reason: str) -> int:
        with self._lock:
            goals, self._goals = self._goals, []
        return sum(1 for g in goals if g.cancel(reason))


def home_robot_tools(robot: SimulatedRobot) -> list[Any]:
    """The eight tools of the demo, bound to ``robot``."""

    @tool(
        examples=[
            ("drive forward 3 meters", {"distance_m": 3}),
            ("back up 2 meters", {"distance_m": -2}),
        ]
    )
    def move(distance_m: float) -> str:
        """Move or drive straight forward (ahead) or backward by a distance.

        Args:
            distance_m: Distance in meters, between -10 and 10. Negative for backwards (back, backward, reverse).
        """
        robot.drive(distance_m)
        way = "forward" if distance_m >= 0 else "backward"
        return f"Moved {way} {abs(distance_m):g} meters."

    @tool(
        examples=[
            ("turn left", {"direction": "left"}),
            ("rotate right 45 degrees", {"direction": "right", "degrees": 45}),
        ]
    )
    def turn(direction: Literal["left", "right"], degrees: float = 90) -> str:
        """Turn, rotate or spin in place to face left or right.

        Args:
            direction: Which way to turn.
            degrees: How many degrees to turn, between 0 and 360.
        """
        robot.rotate(degrees if direction == "left" else -degrees)
        return f"Turned {direction} {degrees:g} degrees."

    @skill(timeout_s=60.0, examples=[("go to the office", {"room": "office"})])
    def go_to(room: Room, goal: GoalHandle) -> str:
        """Go, drive, navigate or head to a room of the house, or return to the charging dock.

        Args:
            room: Destination room.
        """
        robot.track(goal)
        with robot._lock:
            start = (robot.x_m, robot.y_m)
        target = ROOM_POSITIONS_M[room]
        distance = math.dist(start, target)
        steps = max(1, int(distance / (robot.speed_m_s * 0.05)))
        for i in range(1, steps + 1):
            goal.sleep(0.05)  # raises Cancelled at once on stop/barge-in
            f = i / steps
            with robot._lock:
                robot.x_m = start[0] + (target[0] - start[0]) * f
                robot.y_m = start[1] + (target[1] - start[1]) * f
                robot.battery_pct = max(0.0, robot.battery_pct - 0.01)
            goal.publish_feedback({"progress": round(f, 2)})
        with robot._lock:
            robot.room = room
        return f"Arrived in the {room}."

    @tool(examples=[("stop", {})])
    def stop() -> str:
        """Stop, halt or freeze at once: abort or cancel all motion."""
        with robot._lock:
            robot.stopped_count += 1
        n = robot.cancel_goals("stop")
        return "Stopped." if n == 0 else f"Stopped and cancelled {n} running action(s)."

    @tool(examples=[("battery status", {})])
    def get_battery() -> str:
        """Report the battery charge level (remaining power)."""
        with robot._lock:
            return f"Battery is at {robot.battery_pct:.0f} percent."

    @tool(examples=[("switch the bedroom light off", {"room": "bedroom", "on": False})])
    def set_light(room: LightRoom, on: bool) -> str:
        """Switch or turn the lights (lamp) in a room on or off.

        Args:
            room: Room whose lights to switch.
            on: True for on, false for off.
        """
        with robot._lock:
            robot.lights[room] = on
        return f"The {room} lights are {'on' if on else 'off'}."

    @tool(examples=[("pick up the green bottle", {"object": "green bottle"})])
    def pick_up(object: str) -> str:  # noqa: A002 - the required tool signature
        """Pick up, grab, fetch or lift an object with the gripper.

        Args:
            object: The object to pick up, as the user named it.
        """
        with robot._lock:
            robot.held_object = object
        return f"Picked up the {object}."

    @tool(examples=[("set a timer for 3 minutes", {"minutes": 3})])
    def set_timer(minutes: float) -> str:
        """Set a countdown timer (alarm, reminder).

        Args:
            minutes: Duration in minutes, between 0 and 1440.
        """
        with robot._lock:
            robot.timers.append(Timer(minutes, time.monotonic()))
        return f"Timer set for {minutes:g} minutes."

    return [move, turn, go_to, stop, get_battery, set_light, pick_up, set_timer]


INSTRUCTIONS = (
    "You are a helpful home robot. Use a tool when the user asks you to act; "
    "otherwise answer briefly in one or two short sentences."
)

REPLY_EXAMPLES: tuple[tuple[str, None], ...] = (
    ("how old are you?", None),
    ("thanks a lot", None),
)
"""Few-shot examples of requests answered in words (no tool)."""


def build_home_robot_agent(
    llm: Any, robot: SimulatedRobot | None = None, *, speed_m_s: float | None = None, **overrides: Any
) -> Any:
    """The demo agent over ``llm`` (any :class:`~edgevox.engines.base.LLM`), driving ``robot``.

    ``speed_m_s`` sets the simulated driving speed (a config's ``options: {speed_m_s: 0.2}``
    makes a drive last long enough to try stopping it). ``overrides`` are passed to
    :class:`~edgevox.agents.llm_agent.LLMAgent` (e.g. ``decoder=...``, ``max_tool_hops=...``).
    The robot is ``agent.deps["robot"]``.
    """
    from edgevox.agents.llm_agent import LLMAgent

    robot = robot or SimulatedRobot()
    if speed_m_s is not None:
        if not 0 < speed_m_s <= 10:
            raise ValueError(f"speed_m_s = {speed_m_s}: must be > 0 and <= 10 meters per second")
        robot.speed_m_s = speed_m_s
    tools = home_robot_tools(robot)
    options: dict[str, Any] = {
        "instructions": INSTRUCTIONS,
        "few_shot": REPLY_EXAMPLES,
        "speak_tool_results": True,
        "reply_max_tokens": 48,
    }
    options.update(overrides)
    agent = LLMAgent("home_robot", tools=tools, llm=llm, **options)
    agent.deps["robot"] = robot
    return agent
