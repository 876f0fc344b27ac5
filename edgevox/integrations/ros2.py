"""ROS 2 bridge (rclpy): a runtime inside a ROS 2 node, or next to one.

Two ways to host it:

* **Own node** (``Ros2Bridge(bus, config, ...).start()``): the bridge creates its own
  rclpy ``Context`` (domain id from config, no signal handlers), a node, and a
  ``MultiThreadedExecutor`` spinning on the thread ``edgevox-ros2-spin``. Nothing global
  is touched, so a process can host two bridges, or a bridge next to the user's nodes.
* **Existing node** (``Ros2Bridge(bus, config, node=my_node, ...).start()``): publishers,
  subscriptions and a guard condition are created on ``my_node``; the host keeps spinning
  it with its own executor. That executor must be multi-threaded (or at least not blocked
  by other long callbacks) for ``stop``/``skill/cancel`` to be served promptly.

Topics, message formats and the goal protocol are described in ``docs/ros.md`` and
:mod:`edgevox.integrations.ros_common`. Every topic message is ``std_msgs/String`` (JSON).
Next to the ``stop`` topic, a ``std_srvs/srv/Trigger`` service of the same name runs the
safety stop and answers what it stopped (``stop_service``), and a
``diagnostic_msgs/DiagnosticArray`` goes to ``/diagnostics`` every ``diagnostics_period_s``
(:mod:`edgevox.integrations.ros2_diagnostics`); edgevox's log records go to ``/rosout``
(``rosout``, :mod:`edgevox.integrations.ros2_rosout`). ``edgevox ros2`` adds parameters and the
managed lifecycle (:mod:`edgevox.integrations.ros2_node`).

Threads: subscriptions and the stop service use a ``ReentrantCallbackGroup`` (a cancel is
handled while another message is in a callback); outgoing messages are published only from the
guard-condition and diagnostics-timer callbacks, i.e. on an executor thread, never from the
agent or bus threads that produce them.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from edgevox.errors import BridgeError, MissingDependencyError
from edgevox.integrations.config import Ros2BridgeConfig
from edgevox.integrations.events import BridgeStateEvent
from edgevox.integrations.limits import BridgeCounters
from edgevox.integrations.ros2_diagnostics import DiagnosticsCollector, to_message
from edgevox.integrations.ros2_rosout import ROSOUT_TOPIC, RosoutHandler
from edgevox.integrations.ros2_stop import safety_stop
from edgevox.integrations.ros_common import RosBridgeCore, TextHandler, resolve_topic
from edgevox.runtime.lifecycle import ComponentState, StopReport, component_lifecycle, stop_timeout

if TYPE_CHECKING:
    from edgevox.agents.skills import Skill, SkillExecutor
    from edgevox.runtime.bus import EventBus
    from edgevox.runtime.context import AgentContext

log = logging.getLogger(__name__)


def import_rclpy(config: Ros2BridgeConfig) -> Any:
    """Import rclpy after naming the RMW and the discovery range (unless the environment did)."""
    # The ros-rclpy wheels fail to load without an RMW named; these only fill in what is unset.
    os.environ.setdefault("RMW_IMPLEMENTATION", config.rmw_implementation)
    if config.localhost_only:
        os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    try:
        import rclpy
        import rclpy.executors  # noqa: F401 - make the submodules below available
        from std_msgs.msg import String  # noqa: F401
    except ImportError as exc:
        raise MissingDependencyError(
            "ros-rclpy ros-std-msgs ros-rmw-fastrtps-cpp", extra="ros2", purpose="the ROS 2 bridge"
        ) from exc
    try:
        import diagnostic_msgs.msg  # noqa: F401
        import std_srvs.srv  # noqa: F401
    except ImportError as exc:
        raise MissingDependencyError(
            "ros-std-srvs ros-diagnostic-msgs", extra="ros2", purpose="the ROS 2 stop service and diagnostics"
        ) from exc
    return rclpy


def qos_profile(config: Ros2BridgeConfig) -> Any:
    from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST,
        depth=config.qos.depth,
        reliability=ReliabilityPolicy.RELIABLE
        if config.qos.reliability == "reliable"
        else ReliabilityPolicy.BEST_EFFORT,
        durability=DurabilityPolicy.TRANSIENT_LOCAL
        if config.qos.durability == "transient_local"
        else DurabilityPolicy.VOLATILE,
    )


class Ros2Bridge:
    """Publishes runtime events to ROS 2 topics and feeds ROS 2 input into the runtime.

    ``on_text(text)`` handles a ``text_input`` message (typically ``VoiceLoop.submit_text``);
    ``on_say(text)`` a ``say`` message. Both run on the bridge's inbox thread.
    ``skills`` can be started and cancelled from ROS (``skill/goal``, ``skill/cancel``).
    """

    def __init__(
        self,
        bus: EventBus,
        config: Ros2BridgeConfig,
        *,
        on_text: TextHandler | None = None,
        on_say: TextHandler | None = None,
        skills: Iterable[Skill] | Mapping[str, Skill] = (),
        ctx: AgentContext | None = None,
        executor: SkillExecutor | None = None,
        node: Any = None,
    ) -> None:
        self.config = config
        self.bus = bus
        self.core = RosBridgeCore(
            bus, config, bridge="ros2", on_text=on_text, on_say=on_say, skills=skills, ctx=ctx, executor=executor
        )
        self._host_node = node
        self.node: Any = node
        self._context: Any = None
        self._executor: Any = None
        self._spin_thread: threading.Thread | None = None
        self._publishers: dict[str, Any] = {}
        self._subscriptions: list[Any] = []
        self._guard: Any = None
        self._life = component_lifecycle("ROS 2 bridge", noun="bridge", error=BridgeError)
        self._detail = ""
        self._lock = threading.Lock()
        self.hardware_id = config.namespace
        """``hardware_id`` of the diagnostics (``edgevox ros2`` sets the application name)."""
        self._service: Any = None
        self._rosout: RosoutHandler | None = None
        self._rosout_publisher: Any = None
        self._diag_publisher: Any = None
        self._diag_timer: Any = None
        self._diag_lock = threading.Lock()
        self.diagnostics: DiagnosticsCollector | None = None
        self.other_bridges: dict[str, BridgeCounters] = {}
        """The application's other bridges' counters by name (``zenoh``...), shown in the diagnostics."""
        self._outgoing: Any = None

    def attach(self, node: Any) -> Ros2Bridge:
        """Host the bridge on ``node`` (before :meth:`start`): what ``node=`` does, for a
        bridge built by the config wiring. The caller keeps spinning ``node``."""
        if self._life.state is not ComponentState.NEW:
            raise BridgeError(f"ROS 2 bridge: attach() after start(); the bridge is {self._life.state.value}")
        self._host_node = self.node = node
        return self

    @property
    def counters(self) -> BridgeCounters:
        """What the bridge received, refused and dropped (:data:`ros_common.COUNTERS`)."""
        return self.core.counters

    @property
    def running(self) -> bool:
        return self._life.state is ComponentState.RUNNING

    def start(self) -> Ros2Bridge:
        """Create (or attach to) the node, publishers and subscriptions; start spinning. Returns self."""
        self._life.to(ComponentState.STARTING, "start()")
        try:
            rclpy = import_rclpy(self.config)
        except BaseException:
            self._life.to(ComponentState.FAILED)
            raise
        try:
            if self._host_node is None:
                self._make_node(rclpy)
            self._declare(rclpy)
        except BridgeError:
            self._teardown(1.0)
            self._life.to(ComponentState.FAILED)
            raise
        except Exception as exc:  # noqa: BLE001 - rclpy raises many types (RCLError, InvalidTopicNameException...)
            self._teardown(1.0)
            self._life.to(ComponentState.FAILED)
            raise BridgeError(
                f"bridges.ros2: cannot start node {self.config.node_name!r} in {self.config.namespace!r}: {exc}"
            ) from exc
        self.core.start(wake=self._wake)
        if self.diagnostics is not None:
            self.diagnostics.attach(self.bus)
        if self._executor is not None:
            self._spin_thread = threading.Thread(target=self._spin, name="edgevox-ros2-spin", daemon=True)
            self._spin_thread.start()
        self._life.to(ComponentState.RUNNING)
        self._detail = self._describe()
        self.core._publish(BridgeStateEvent(source="ros2", bridge="ros2", state="started", detail=self._detail))
        return self

    def _describe(self) -> str:
        domain = self._context.get_domain_id() if self._context is not None else os.environ.get("ROS_DOMAIN_ID", "0")
        return f"node={self.config.namespace}/{self.config.node_name} domain={domain}"

    def _make_node(self, rclpy: Any) -> None:
        from rclpy.context import Context
        from rclpy.executors import MultiThreadedExecutor
        from rclpy.signals import SignalHandlerOptions

        self._context = Context()
        # A guest in the host process: no SIGINT/SIGTERM handlers, our own context.
        rclpy.init(
            context=self._context, domain_id=self.config.domain_id, signal_handler_options=SignalHandlerOptions.NO
        )
        self.node = rclpy.create_node(
            self.config.node_name,
            namespace=self.config.namespace,
            context=self._context,
            start_parameter_services=False,
        )
        self._executor = MultiThreadedExecutor(num_threads=self.config.executor_threads, context=self._context)
        self._executor.add_node(self.node)

    def _declare(self, rclpy: Any) -> None:
        from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
        from std_msgs.msg import String

        node = self.node
        qos = qos_profile(self.config)
        incoming = ReentrantCallbackGroup()
        outgoing = MutuallyExclusiveCallbackGroup()
        for topic in self.core.outgoing_topics():
            self._publishers[topic] = node.create_publisher(String, topic, qos)
        for topic in self.core.incoming_topics():
            self._subscriptions.append(
                node.create_subscription(
                    String, topic, lambda msg, _t=topic: self.core.handle(_t, msg.data), qos, callback_group=incoming
                )
            )
        # trigger() is thread-safe; the callback runs on an executor thread and publishes there.
        self._guard = node.create_guard_condition(self._flush, callback_group=outgoing)
        if self.config.stop_service:
            from std_srvs.srv import Trigger

            name = resolve_topic(self.config.namespace, self.config.topics.stop)
            self._service = node.create_service(Trigger, name, self._stop_service, callback_group=incoming)
        self._outgoing = outgoing
        if self.config.rosout:
            from rcl_interfaces.msg import Log
            from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

            rosout_qos = QoSProfile(
                depth=1000, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
            )
            self._rosout_publisher = node.create_publisher(Log, ROSOUT_TOPIC, rosout_qos)
            self._rosout = RosoutHandler(f"{self.config.namespace.strip('/')}/{self.config.node_name}", self._wake)
            logging.getLogger("edgevox").addHandler(self._rosout)
        if self.config.diagnostics_period_s is not None:
            self._start_diagnostics(self.config.diagnostics_period_s)

    # -- the stop service ------------------------------------------------------------------------

    def _stop_service(self, _request: Any, response: Any) -> Any:
        """Executor thread: the safety stop, answered with what it stopped (``std_srvs/Trigger``)."""
        reason = f"ROS 2 stop service {resolve_topic(self.config.namespace, self.config.topics.stop)}"
        try:
            response.success, response.message = True, self.safety_stop(reason)
        except Exception as exc:  # noqa: BLE001 - an exception would end the executor's spin
            self.core.cancel_goals(reason)  # whatever failed, the goals started here stop
            log.error("ROS 2 stop service: %r", exc)
            response.success, response.message = (
                False,
                f"stop failed: {exc}; goals started through the bridge were cancelled",
            )
        return response

    def safety_stop(self, reason: str) -> str:
        """Run the safety stop from ROS and say what it stopped (:func:`ros2_stop.safety_stop`)."""
        return safety_stop(self.bus, self.core, reason)

    # -- diagnostics ---------------------------------------------------------------------------------

    def _start_diagnostics(self, period_s: float) -> None:
        from diagnostic_msgs.msg import DiagnosticArray

        node = self.node
        if self.diagnostics is None:
            self.diagnostics = DiagnosticsCollector(
                node=node.get_name(),
                hardware_id=self.hardware_id,
                counters=self._counters,
                others=lambda: {name: c.snapshot() for name, c in self.other_bridges.items()},
            )
        if self._diag_publisher is None:
            topic = resolve_topic(self.config.namespace, self.config.diagnostics_topic)
            self._diag_publisher = node.create_publisher(DiagnosticArray, topic, 10)
        self._diag_timer = node.create_timer(period_s, self._publish_diagnostics, callback_group=self._outgoing)

    def _counters(self) -> dict[str, int]:
        return {**self.core.counters.snapshot(), "goals_running": len(self.core.running_goals)}

    def _publish_diagnostics(self) -> None:
        """Executor thread (the diagnostics timer)."""
        collector, publisher = self.diagnostics, self._diag_publisher
        if collector is None or publisher is None:
            return
        collector.hardware_id = self.hardware_id
        try:
            publisher.publish(to_message(collector.statuses(), self.hardware_id, self.node.get_clock().now().to_msg()))
        except Exception as exc:  # noqa: BLE001 - an exception would end the executor's spin
            log.warning("ROS 2 diagnostics not published: %r", exc)

    def set_diagnostics_period(self, period_s: float | None) -> None:
        """Publish diagnostics every ``period_s`` seconds from now on (None: stop publishing)."""
        with self._diag_lock:
            if self.node is None or not self.running:
                return
            if self._diag_timer is not None:
                self.node.destroy_timer(self._diag_timer)
                self._diag_timer = None
            if period_s is not None:
                self._start_diagnostics(period_s)
                if self.diagnostics is not None:
                    self.diagnostics.attach(self.bus)

    def _wake(self) -> None:
        guard = self._guard
        if guard is not None:
            guard.trigger()

    def _flush(self) -> None:
        """Executor thread: publish everything the outbox holds."""
        from std_msgs.msg import String

        for topic, data in self.core.drain():
            publisher = self._publishers.get(topic)
            if publisher is not None:
                msg = String()
                msg.data = data
                publisher.publish(msg)
        rosout, rosout_publisher = self._rosout, self._rosout_publisher
        if rosout is not None and rosout_publisher is not None:
            from rcl_interfaces.msg import Log

            for record in rosout.drain():
                rosout_publisher.publish(rosout.message(record, Log))

    def _spin(self) -> None:
        try:
            self._executor.spin()
        except Exception as exc:  # noqa: BLE001 - ExternalShutdownException or a broken context
            if self.running:
                log.error("ROS 2 bridge: executor stopped: %r", exc)
                self.core._publish(BridgeStateEvent(source="ros2", bridge="ros2", state="failed", detail=repr(exc)))

    def stop(self, timeout_s: float | None = None, *, timeout: float | None = None) -> StopReport:
        """Cancel goals started here, stop spinning, destroy what the bridge created (within
        ``timeout_s``, default 3 s; ``timeout`` is EdgeVox's spelling). Truthy when clean."""
        timeout_s = stop_timeout(timeout_s, timeout, 3.0)
        with self._lock:
            if not self._life.to_if(ComponentState.STOPPING, ComponentState.RUNNING):
                self._life.to_if(ComponentState.STOPPED, ComponentState.NEW, ComponentState.FAILED)
                return StopReport()
        abandoned = [] if self.core.stop(timeout_s / 2) else ["ROS 2 bridge goals"]
        if not self._teardown(timeout_s / 2):
            abandoned.append("edgevox-ros2-spin")
        self._life.to(ComponentState.STOPPED)
        self.core._publish(BridgeStateEvent(source="ros2", bridge="ros2", state="stopped", detail=self._detail))
        return StopReport.abandoned_threads(abandoned)

    def _teardown(self, timeout_s: float) -> bool:
        clean = True
        if self._rosout is not None:
            logging.getLogger("edgevox").removeHandler(self._rosout)
            self._rosout = None
        node = self.node
        if self._executor is not None:
            clean &= bool(self._executor.shutdown(timeout_sec=timeout_s))
        if self._spin_thread is not None:
            self._spin_thread.join(timeout_s)
            clean &= not self._spin_thread.is_alive()
            self._spin_thread = None
        if self.diagnostics is not None:
            self.diagnostics.close()
        if node is not None:
            # On a host node, remove only what we created; our own node goes entirely.
            for sub in self._subscriptions:
                node.destroy_subscription(sub)
            for pub in self._publishers.values():
                node.destroy_publisher(pub)
            if self._guard is not None:
                node.destroy_guard_condition(self._guard)
            with self._diag_lock:
                if self._diag_timer is not None:
                    node.destroy_timer(self._diag_timer)
                if self._diag_publisher is not None:
                    node.destroy_publisher(self._diag_publisher)
                self._diag_timer = self._diag_publisher = None
            if self._service is not None:
                node.destroy_service(self._service)
                self._service = None
            if self._rosout_publisher is not None:
                node.destroy_publisher(self._rosout_publisher)
                self._rosout_publisher = None
            if self._host_node is None:
                node.destroy_node()
        self._subscriptions.clear()
        self._publishers.clear()
        self._guard = None
        if self._context is not None:
            self._context.try_shutdown()
        self._executor = None
        return clean

    def __enter__(self) -> Ros2Bridge:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
