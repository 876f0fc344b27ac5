"""Bridges from the config: the enabled ``bridges:`` (Zenoh, ROS 2, ROS 1), built on the
runtime's bus and blackboard but not started, and their checks for ``edgevox check``.
Part of the wiring in :mod:`edgevox.config.build`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from edgevox.errors import ConfigError

if TYPE_CHECKING:
    from edgevox.agents.base import Agent
    from edgevox.integrations.config import BridgesConfig
    from edgevox.runtime.lifecycle import Component as Bridge
    from edgevox.runtime.runtime import Runtime


def make_bridges(
    cfg: BridgesConfig,
    runtime: Runtime,
    *,
    on_text: Callable[..., object] | None = None,
    on_say: Callable[[str], object] | None = None,
    main: Agent | None = None,
    main_name: str = "",
) -> list[tuple[str, Bridge]]:
    """The enabled bridges on ``runtime``'s bus and blackboard, built but not started
    (``App.start`` starts them).

    ROS bridges get the text handlers (a user turn; words to speak as they are), the main
    agent's skills with its executor when it is an LLMAgent with skills (so a safety stop on
    the bus cancels goals that ROS clients started, like the agent's own) and a context on
    the runtime's bus and blackboard. ``on_text(text, channel=...)`` is called with the
    bridge's name (``ros2``/``ros1``) as the channel, so routing rules can tell a ROS turn
    from a spoken or typed one (``App`` passes ``VoiceLoop.submit_text``).
    """
    from edgevox.agents.llm_agent import LLMAgent

    bus, blackboard = runtime.bus, runtime.blackboard
    ctx = runtime.pool.make_ctx(agent_name=main_name)
    skills = list(main.skills.values()) if isinstance(main, LLMAgent) else []
    executor = main.executor if isinstance(main, LLMAgent) and skills else None
    out: list[tuple[str, Bridge]] = []
    if cfg.zenoh.enabled:
        from edgevox.integrations.zenoh_bridge import ZenohBridge

        zenoh = ZenohBridge(bus, cfg.zenoh, blackboard=blackboard, activities=runtime.activities)
        out.append(("zenoh", zenoh))
    if cfg.ros2.enabled:
        from edgevox.integrations.ros2 import Ros2Bridge

        ros2_text = _from_channel(on_text, "ros2")
        ros2 = Ros2Bridge(bus, cfg.ros2, on_text=ros2_text, on_say=on_say, skills=skills, executor=executor, ctx=ctx)
        if cfg.zenoh.enabled:
            ros2.other_bridges["zenoh"] = zenoh.counters  # its losses show in the ROS diagnostics too
        out.append(("ros2", ros2))
    if cfg.ros1.enabled:
        try:
            from edgevox.integrations.ros1 import Ros1Bridge
        except ModuleNotFoundError as exc:
            raise ConfigError(f"bridges.ros1.enabled: the ROS 1 bridge is not available here: {exc}") from None
        ros1_text = _from_channel(on_text, "ros1")
        ros1 = Ros1Bridge(bus, cfg.ros1, on_text=ros1_text, on_say=on_say, skills=skills, executor=executor, ctx=ctx)
        out.append(("ros1", ros1))
    return out


def _from_channel(on_text: Callable[..., object] | None, channel: str) -> Callable[[str], object] | None:
    """``on_text`` called with ``channel=`` the bridge's name (None stays None)."""
    if on_text is None:
        return None
    return lambda text: on_text(text, channel=channel)


def check_bridges(cfg: BridgesConfig) -> list[tuple[str, str, str]]:
    """``(bridge, status, detail)`` for ``edgevox check``: ``off`` for a disabled bridge, else
    ``ok``/``fail`` from :func:`edgevox.integrations.check_bridges` (which really opens a Zenoh
    session, initialises a private rclpy context, or asks the ROS 1 master)."""
    from edgevox.integrations import check_bridges as check_enabled

    results = {name: ("ok" if ok else "fail", detail) for name, ok, detail in check_enabled(cfg)}
    return [(name, *results.get(name, ("off", "disabled"))) for name in ("zenoh", "ros2", "ros1")]
