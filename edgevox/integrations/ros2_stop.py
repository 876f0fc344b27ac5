"""The safety stop as a ROS service answers it: run it, then say what was stopped.

The ``std_srvs/srv/Trigger`` service of :class:`~edgevox.integrations.ros2.Ros2Bridge` (named
like the ``stop`` topic) calls :func:`safety_stop` on an executor thread. It publishes
``control.stop`` on the bus, exactly like a message on the ``stop`` topic: the voice loop (an
``App`` forwards it) halts speech, cancels the turns and every registered activity and publishes
``voice.stopped`` with what it cancelled; the runtime and the other bridges act on it too. The
goals started through this bridge are cancelled as well, and the answer names all of it::

    stopped: goal g1 (skill hold_position), turn 4, tool move

or ``stopped: nothing was running``; anything that ignored the cancel is named after ``still
running``. Without a voice loop (a bridge hosted next to a bare runtime) no ``voice.stopped``
comes: after ``STOP_REPORT_WAIT_S`` the answer names the goals only.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from edgevox.runtime.events import Event, StopEvent

if TYPE_CHECKING:
    from edgevox.integrations.ros_common import RosBridgeCore
    from edgevox.runtime.bus import EventBus

log = logging.getLogger(__name__)

STOP_REPORT_WAIT_S = 0.5
"""How long to wait for the voice loop's ``voice.stopped`` report (it normally comes before the
``control.stop`` publish returns, as the App's stop handler runs on the publisher's thread)."""


def safety_stop(bus: EventBus, core: RosBridgeCore, reason: str, wait_s: float = STOP_REPORT_WAIT_S) -> str:
    """Publish ``control.stop`` with ``reason``, cancel ``core``'s goals, say what was stopped."""
    reports: list[Event] = []
    got = threading.Event()

    def seen(event: Event) -> None:
        if getattr(event, "reason", "") == reason:
            reports.append(event)
            got.set()

    goals = core.running_goal_skills()
    sub = bus.subscribe("voice.stopped", seen, name=f"{core.bridge}-stop-service")
    try:
        core._publish(StopEvent(source=core.bridge, reason=reason))
        got.wait(wait_s)
    finally:
        sub.close()
    core.cancel_goals(reason)
    return describe(goals, reports[0] if reports else None)


def describe(goals: dict[str, str], report: Event | None) -> str:
    """``stopped: ...`` from the goals cancelled here (id -> skill) and the loop's ``voice.stopped``."""
    stopped = [f"goal {g} (skill {s})" for g, s in goals.items()]
    ignored: list[str] = []
    if report is not None:
        stopped += [f"turn {t}" for t in getattr(report, "cancelled_turns", None) or []]
        skills = {f"skill {s}" for s in goals.values()}  # the same goals, as the loop names them
        stopped += [c for c in getattr(report, "cancelled", None) or [] if c not in skills]
        ignored = list(getattr(report, "ignored", None) or [])
    message = f"stopped: {', '.join(stopped)}" if stopped else "stopped: nothing was running"
    if ignored:
        message += f"; still running (ignored the cancel): {', '.join(ignored)}"
    log.info("ROS stop service: %s", message)
    return message
