"""Bridges that carry the runtime beyond one process: ROS 2, ROS 1 and the bus over Zenoh.

Modules (each imports its engine only when a bridge starts, so ``import edgevox.integrations``
stays light):

* ``config``        - ``BridgesConfig`` (the YAML ``bridges`` section)
* ``serialization`` - explicit JSON envelopes for events, checked field by field on arrival;
  size and nesting limits; echo-loop marks (no pickle)
* ``limits``        - counters, rate limits, the bounded inbox, peer timeout clamping
* ``zenoh_bridge``  - ``ZenohBridge``: selected event kinds + blackboard requests over Zenoh
* ``zenoh_serve``   - serving peers' blackboard requests (allowlist, no overwrite, no waiting worker)
* ``zenoh_session`` - the Zenoh config (file, edgevox's fields, overrides) and exposure warnings
* ``ros_common``    - ``RosBridgeCore``: topics, JSON messages and the skill goal protocol
* ``ros2``          - ``Ros2Bridge`` (rclpy, own context + MultiThreadedExecutor, or a host node)
* ``ros1``          - ``Ros1Bridge`` (rospy)

:func:`check_bridges` is what ``edgevox check`` calls.
"""

from __future__ import annotations

from typing import Any

from edgevox.integrations.config import BridgesConfig

__all__ = ["BridgesConfig", "check_bridges"]


def check_bridges(config: Any) -> list[tuple[str, bool, str]]:
    """For every *enabled* bridge: ``(name, ok, message)`` saying whether it can start here.

    ``config`` is an ``AppConfig`` (its ``bridges`` section is used) or a ``BridgesConfig``.
    Checks are real but brief: Zenoh opens and closes a session with the configured
    endpoints (so a taken listen port is reported), ROS 2 initialises and shuts down a
    private rclpy context, ROS 1 imports rospy and asks the master whether it is online.
    Runs on the caller's thread; takes well under a second per bridge when things are fine.
    """
    bridges = getattr(config, "bridges", config)
    results: list[tuple[str, bool, str]] = []
    if bridges.zenoh.enabled:
        results.append(("zenoh", *_check(_check_zenoh, bridges.zenoh)))
    if bridges.ros2.enabled:
        results.append(("ros2", *_check(_check_ros2, bridges.ros2)))
    if bridges.ros1.enabled:
        results.append(("ros1", *_check(_check_ros1, bridges.ros1)))
    return results


def _check(fn: Any, cfg: Any) -> tuple[bool, str]:
    try:
        return True, fn(cfg)
    except Exception as exc:  # noqa: BLE001 - every failure is a report line, never a crash of `check`
        return False, str(exc) or type(exc).__name__


def _check_zenoh(cfg: Any) -> str:
    import json

    from edgevox.errors import BridgeError
    from edgevox.integrations.zenoh_session import _import_zenoh, build_zenoh_config, fleet_refusal

    zenoh = _import_zenoh()
    conf = build_zenoh_config(cfg)
    refusal = fleet_refusal(cfg, conf)
    if refusal:
        raise BridgeError(refusal)
    listen, connect = (json.loads(conf.get_json(f"{name}/endpoints")) or "-" for name in ("listen", "connect"))
    try:
        session = zenoh.open(conf)
    except Exception as exc:  # noqa: BLE001 - ZError
        raise BridgeError(f"cannot open a Zenoh session (listen={listen}, connect={connect}): {exc}") from exc
    session.close()
    role = f", fleet {cfg.fleet}" if cfg.fleet else f", robots {cfg.namespace}/{cfg.robots}" if cfg.robots else ""
    acl = json.loads(conf.get_json("access_control/enabled")) is True
    return (
        f"session opens (namespace {cfg.namespace}{role}, mode {cfg.mode}, listen {listen}, connect {connect}"
        f"{', access control on' if acl else ''})"
    )


def _check_ros2(cfg: Any) -> str:
    from edgevox.integrations.ros2 import import_rclpy

    rclpy = import_rclpy(cfg)
    from rclpy.context import Context
    from rclpy.signals import SignalHandlerOptions

    context = Context()
    rclpy.init(context=context, domain_id=cfg.domain_id, signal_handler_options=SignalHandlerOptions.NO)
    try:
        domain = context.get_domain_id()
    finally:
        context.try_shutdown()
    import os

    return f"rclpy ready (RMW {os.environ.get('RMW_IMPLEMENTATION')}, domain {domain}, namespace {cfg.namespace})"


def _check_ros1(cfg: Any) -> str:
    import os

    from edgevox.errors import BridgeError
    from edgevox.integrations.ros1 import import_rospy

    import_rospy(cfg)
    import rosgraph

    uri = cfg.master_uri or os.environ.get("ROS_MASTER_URI", "http://localhost:11311")
    try:
        online = rosgraph.Master("/edgevox_check", master_uri=uri).is_online()
    except Exception:  # noqa: BLE001 - unreachable host, refused connection
        online = False
    if not online:
        raise BridgeError(f"no ROS master answers at {uri}; start `roscore` or set bridges.ros1.master_uri")
    return f"ROS master online at {uri}"
