"""An edgevox application in a ROS 2 node, the ROS way: what ``edgevox ros2 CONFIG`` runs.

:class:`Ros2AppNode` (the default, a plain node) owns an rclpy ``Context`` (no signal handlers),
one node named ``bridges.ros2.node_name`` in ``bridges.ros2.namespace``, and a
``MultiThreadedExecutor`` spinning on ``edgevox-ros2-spin``. :meth:`Ros2AppNode.start`:

1. declares the config keys of :data:`~edgevox.integrations.ros2_params.PARAMETERS` as ROS
   parameters (``--ros-args -p key:=value`` and ``--params-file`` override the config; the
   result is validated like the YAML, a bad value raises :class:`~edgevox.errors.ConfigError`),
2. builds the :class:`~edgevox.app.App` (loads the models), hosts its ROS 2 bridge (topics,
   the ``stop`` Trigger service, ``/diagnostics``) on the node, and starts it.

``ros2 param set`` then changes live keys in the running application and refuses the others
(:class:`~edgevox.integrations.ros2_params.ParameterBinding`).
:class:`~edgevox.integrations.ros2_lifecycle.Ros2LifecycleAppNode` is the managed variant.

Threads: the caller's thread runs ``start``/``stop``; ROS callbacks (parameters, lifecycle
transitions, the bridge's topics and services) run on the executor's threads.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from edgevox.errors import BridgeError
from edgevox.integrations.ros2 import import_rclpy
from edgevox.integrations.ros2_params import ConfigSource, ParameterBinding, apply_live, declare
from edgevox.runtime.lifecycle import StopReport

if TYPE_CHECKING:
    from edgevox.app import App
    from edgevox.config.build import Engines
    from edgevox.config.schema import AppConfig
    from edgevox.integrations.ros2 import Ros2Bridge

log = logging.getLogger(__name__)


class Ros2AppNode:
    """An application hosted in a plain ROS 2 node (see the module docstring).

    ``ros_args``: the node's ROS arguments after ``--ros-args`` (``-p key:=value``,
    ``--params-file FILE``, remappings). ``engines``: engines to use instead of loading them
    (tests inject scripted ones)."""

    managed = False

    def __init__(self, source: ConfigSource, *, ros_args: Sequence[str] = (), engines: Engines | None = None) -> None:
        self.source = source
        self.ros_args = list(ros_args)
        self.engines = engines
        self.config: AppConfig = source.load()
        self.app: App | None = None
        self.node: Any = None
        self.params: ParameterBinding | None = None
        self.finished = threading.Event()
        """Set when the node should end (a managed node's ``shutdown`` transition)."""
        self.stop_report = StopReport()
        """What the last stop of the application left behind (a managed node's deactivate,
        cleanup or shutdown, or :meth:`stop`)."""
        self._context: Any = None
        self._executor: Any = None
        self._spin: threading.Thread | None = None
        self._app_lock = threading.RLock()

    # -- setup ------------------------------------------------------------------------------------

    def start(self) -> Ros2AppNode:
        """Create the node, declare and read the parameters, build and start the application."""
        self._open()
        try:
            self.app = self._build()
            self._start_app(self.app)
        except BaseException:
            self.stop(self.config.runtime.shutdown_timeout_s)
            raise
        self._spin_up()
        return self

    def _open(self) -> None:
        """Context, node and parameters (validated with the config); raises ConfigError."""
        section = self.config.bridges.ros2
        rclpy = import_rclpy(section)
        from rclpy.context import Context
        from rclpy.executors import MultiThreadedExecutor
        from rclpy.signals import SignalHandlerOptions

        self._context = Context()
        rclpy.init(context=self._context, domain_id=section.domain_id, signal_handler_options=SignalHandlerOptions.NO)
        try:
            self.node = self._make_node(section.node_name, section.namespace)
        except Exception as exc:  # noqa: BLE001 - rclpy raises many types for bad --ros-args
            self._context.try_shutdown()
            raise BridgeError(f"edgevox ros2: cannot create node {section.node_name!r}: {exc}") from exc
        changed = declare(self.node, self.config, managed=self.managed)
        if changed:
            self.config = self.source.load(changed)  # a bad --ros-args value stops here, named
            log.info("ROS parameters override the config: %s", changed)
        self.params = ParameterBinding(
            self.source, changed, running=self._locked, apply=self._apply, config=self.config
        )
        self.node.add_on_set_parameters_callback(self.params.on_set)
        self._executor = MultiThreadedExecutor(num_threads=section.executor_threads, context=self._context)
        self._executor.add_node(self.node)

    def _make_node(self, name: str, namespace: str) -> Any:
        from rclpy.node import Node

        return Node(name, namespace=namespace, context=self._context, cli_args=["--ros-args", *self.ros_args])

    def _spin_up(self) -> None:
        self._spin = threading.Thread(target=self._spin_loop, name="edgevox-ros2-spin", daemon=True)
        self._spin.start()

    def _spin_loop(self) -> None:
        try:
            self._executor.spin()
        except Exception as exc:  # noqa: BLE001 - ExternalShutdownException or a broken context
            log.error("edgevox ros2 node: executor stopped: %r", exc)
            self.finished.set()

    # -- the application ------------------------------------------------------------------------

    def _build(self, engines: Engines | None = None) -> App:
        """The App from the current config (loads models unless ``engines`` has them)."""
        from edgevox.app import App

        config = self.params.config if self.params is not None else self.config
        self.config = config
        return App.build(config, engines=engines or self.engines)

    def _start_app(self, app: App) -> None:
        """Host the app's ROS 2 bridge on our node, then start the app (opens the devices)."""
        bridge = self.bridge_of(app)
        if bridge is not None:
            bridge.attach(self.node)
            bridge.hardware_id = app.config.name
        app.start()

    @staticmethod
    def bridge_of(app: App | None) -> Ros2Bridge | None:
        from edgevox.integrations.ros2 import Ros2Bridge

        for _name, bridge in app.bridges if app is not None else ():
            if isinstance(bridge, Ros2Bridge):
                return bridge
        return None

    def _locked(self) -> bool:
        """Whether read-only parameters are refused now (a plain node: always)."""
        return True

    def _apply(self, config: AppConfig, keys: set[str]) -> None:
        with self._app_lock:
            self.config = config
            apply_live(self.app, config, keys, bridge=self.bridge_of(self.app))

    # -- teardown -------------------------------------------------------------------------------

    def stop(self, timeout_s: float | None = None) -> StopReport:
        """Stop the application (its report under ``app``), then the executor and the node."""
        timeout_s = self.config.runtime.shutdown_timeout_s if timeout_s is None else timeout_s
        with self._app_lock:
            app, self.app = self.app, None
        parts: dict[str, StopReport] = {}
        if app is not None:
            parts["app"] = self.stop_report = app.stop(timeout_s=timeout_s)
        elif not self.stop_report:  # what a managed node's shutdown transition left running
            parts["app"] = self.stop_report
        clean = True
        if self._executor is not None:
            clean &= bool(self._executor.shutdown(timeout_sec=timeout_s / 2))
        if self._spin is not None:
            self._spin.join(timeout_s / 2)
            clean &= not self._spin.is_alive()
            self._spin = None
        if self.node is not None:
            self.node.destroy_node()
            self.node = None
        if self._context is not None:
            self._context.try_shutdown()
            self._context = None
        self._executor = None
        self.finished.set()
        parts["ros2 node"] = StopReport() if clean else StopReport.abandoned_threads(["edgevox-ros2-spin"])
        return StopReport.nest(parts)
