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
:mod:`edgevox.integrations.ros_common`. Every message is ``std_msgs/String`` (JSON).

Threads: subscriptions use a ``ReentrantCallbackGroup`` (a cancel is handled while another
message is in a callback); outgoing messages are published only from the guard-condition
callback, i.e. on an executor thread, never from the agent or bus threads that produce them.
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
from edgevox.integrations.ros_common import RosBridgeCore, TextHandler
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
        node = self.node
        if self._executor is not None:
            clean &= bool(self._executor.shutdown(timeout_sec=timeout_s))
        if self._spin_thread is not None:
            self._spin_thread.join(timeout_s)
            clean &= not self._spin_thread.is_alive()
            self._spin_thread = None
        if node is not None:
            # On a host node, remove only what we created; our own node goes entirely.
            for sub in self._subscriptions:
                node.destroy_subscription(sub)
            for pub in self._publishers.values():
                node.destroy_publisher(pub)
            if self._guard is not None:
                node.destroy_guard_condition(self._guard)
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
