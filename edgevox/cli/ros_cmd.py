"""``edgevox ros2 CONFIG`` and ``edgevox ros1 CONFIG``: run an application as a ROS node.

The application is built from CONFIG exactly as ``edgevox run`` builds it, with the chosen
bridge switched on (``bridges.ros2.enabled`` / ``bridges.ros1.enabled``) and the other ROS
bridge switched off (one interpreter cannot load both ROS 1 and ROS 2 messages). Other
options override the bridge section: ``--namespace``, ``--node-name``, ``--domain-id``
(ROS 2), ``--master-uri`` (ROS 1). ``--headless`` takes input only from the
``text_input`` topic and speaks nothing (``audio.input.source: text``, ``audio.output.sink: none``),
for a node on a robot without a microphone or for tests.

ROS 2 the ROS way (:mod:`edgevox.integrations.ros2_node`): the node declares config keys as
parameters; ``--ros-args -p llm.temperature:=0.3`` (or ``--params-file FILE``, any ROS
arguments; they must come last) overrides the config. ``--lifecycle`` makes it a managed node
that starts unconfigured and loads models, opens devices, stops listening and releases
everything on ``configure``/``activate``/``deactivate``/``cleanup``
(:mod:`edgevox.integrations.ros2_lifecycle`); a ``shutdown`` transition ends the command.

Runs until SIGINT/SIGTERM, then stops within ``runtime.shutdown_timeout_s``. This module
(with ``cli/main.py``) is the only place that installs signal handlers.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from typing import Any

from edgevox.cli.args import whole


def register(subparsers: Any) -> None:
    for which in ("ros2", "ros1"):
        p = subparsers.add_parser(
            which,
            help=f"run an application as a ROS {which[-1]} node",
            description=f"Run the application described by CONFIG inside a ROS {which[-1]} node.",
        )
        p.add_argument("config", metavar="CONFIG", help="config file, or a builtin name")
        p.add_argument("--namespace", help="topic namespace, e.g. /robot1/edgevox")
        p.add_argument("--node-name", help="ROS node name")
        if which == "ros2":
            p.add_argument("--domain-id", type=whole(high=232), help="ROS_DOMAIN_ID of the node")
            p.add_argument(
                "--lifecycle",
                action="store_true",
                help="a managed (lifecycle) node: starts unconfigured; configure loads models, activate starts listening",
            )
            p.add_argument(
                "--ros-args",
                nargs=argparse.REMAINDER,
                default=[],
                metavar="ARG",
                help="ROS arguments, last: -p llm.temperature:=0.3, --params-file FILE, remappings",
            )
        else:
            p.add_argument("--master-uri", help="ROS master, e.g. http://localhost:11311")
        p.add_argument(
            "--headless", action="store_true", help="no microphone or speaker: text_input topic in, topics out"
        )
        p.set_defaults(func=cmd_ros, ros=which)


def overrides(args: argparse.Namespace) -> dict[str, Any]:
    which = args.ros
    other = "ros1" if which == "ros2" else "ros2"
    out: dict[str, Any] = {f"bridges.{which}.enabled": True, f"bridges.{other}.enabled": False}
    if args.namespace:
        out[f"bridges.{which}.namespace"] = args.namespace
    if args.node_name:
        out[f"bridges.{which}.node_name"] = args.node_name
    if getattr(args, "domain_id", None) is not None:
        out["bridges.ros2.domain_id"] = args.domain_id
    if getattr(args, "master_uri", None):
        out["bridges.ros1.master_uri"] = args.master_uri
    if args.headless:
        out["audio.input.source"] = "text"
        out["audio.input.file"] = None
        out["audio.output.sink"] = "none"
    return out


def cmd_ros(args: argparse.Namespace) -> int:
    if args.ros == "ros2":
        return cmd_ros2(args)
    from edgevox.app import App
    from edgevox.config.loader import load_config

    config = load_config(args.config, overrides=overrides(args))
    app = App.build(config)
    done = threading.Event()

    def on_signal(_signum: int, _frame: Any) -> None:
        done.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        app.start()
        section = getattr(config.bridges, args.ros)
        print(
            f"edgevox: {args.ros} node {section.namespace}/{section.node_name} running; Ctrl-C stops it",
            file=sys.stderr,
        )
        done.wait()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        clean = app.stop(timeout_s=config.runtime.shutdown_timeout_s)
    if not clean:
        print(f"edgevox: stopped, {app.stop_report}", file=sys.stderr)
    return 0 if clean else 1


def cmd_ros2(args: argparse.Namespace) -> int:
    from edgevox.integrations.ros2_lifecycle import Ros2LifecycleAppNode
    from edgevox.integrations.ros2_node import Ros2AppNode
    from edgevox.integrations.ros2_params import ConfigSource

    source = ConfigSource(args.config, overrides(args))
    kind = Ros2LifecycleAppNode if args.lifecycle else Ros2AppNode
    host = kind(source, ros_args=args.ros_args or [])
    try:
        host.start()  # Ctrl-C while the models load: KeyboardInterrupt (exit 130), what started is stopped
        handlers = {
            sig: signal.signal(sig, lambda _s, _f: host.finished.set()) for sig in (signal.SIGINT, signal.SIGTERM)
        }
        try:
            section = host.config.bridges.ros2
            state = "unconfigured (managed: configure, then activate)" if args.lifecycle else "running"
            print(
                f"edgevox: ros2 node {section.namespace}/{section.node_name} {state}; Ctrl-C stops it",
                file=sys.stderr,
                flush=True,
            )
            host.finished.wait()
        finally:
            for sig, handler in handlers.items():
                signal.signal(sig, handler)
    finally:
        report = host.stop()
    if not report:
        print(f"edgevox: stopped, {report}", file=sys.stderr)
    return 0 if report else 1
