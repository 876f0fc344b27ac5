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
from edgevox.integrations.ros2_diagnostics import DiagnosticsCollector
from edgevox.integrations.ros2_entities import Ros2Entities
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
        self._entities: Ros2Entities | None = None
        """What the bridge created on the node (see ``ros2_entities.py``)."""
        self._keep_entities = False
        """Detached: :meth:`stop` leaves the entities on the node for the next bridge."""
        self._life = component_lifecycle("ROS 2 bridge", noun="bridge", error=BridgeError)
        self._detail = ""
        self._lock = threading.Lock()
        self.hardware_id = config.namespace
        """``hardware_id`` of the diagnostics (``edgevox ros2`` sets the application name)."""
        self.diagnostics: DiagnosticsCollector | None = None
        self.other_bridges: dict[str, BridgeCounters] = {}
        """The application's other bridges' counters by name (``zenoh``...), shown in the diagnostics."""

    def attach(self, node: Any) -> Ros2Bridge:
        """Host the bridge on ``node`` (before :meth:`start`): what ``node=`` does, for a
        bridge built by the config wiring. The caller keeps spinning ``node``."""
        if self._life.state is not ComponentState.NEW:
            raise BridgeError(f"ROS 2 bridge: attach() after start(); the bridge is {self._life.state.value}")
        self._host_node = self.node = node
        return self

    def adopt(self, entities: Ros2Entities) -> Ros2Bridge:
        """Serve the topics and services a bridge of an earlier application left on its node
        (:meth:`detach`), instead of declaring new ones (before :meth:`start`): what a managed
        node does on ``activate`` after a ``deactivate``."""
        if self._life.state is not ComponentState.NEW:
            raise BridgeError(f"ROS 2 bridge: adopt() after start(); the bridge is {self._life.state.value}")
        self._entities = entities
        self._host_node = self.node = entities.node
        return self

    def detach(self) -> Ros2Entities | None:
        """Stop serving the node's topics and services but leave them there (a managed node's
        ``deactivate``): from now on nothing is acted on or published until another bridge
        :meth:`adopt` s them; :meth:`stop` then leaves them. Returns them (None: none yet)."""
        entities = self._entities
        if entities is not None:
            entities.serving = None
            entities.hardware_id = self.hardware_id
            self._keep_entities = True
        return entities

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
            if self._entities is None:
                self._declare()
            self._start_diagnostics()
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
        entities = self._entities
        assert entities is not None
        self.core.start(wake=entities.wake)
        if self.diagnostics is not None:
            self.diagnostics.attach(self.bus)
        entities.serving = self
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

    def _declare(self) -> None:
        name = f"{self.config.namespace.strip('/')}/{self.config.node_name}"
        entities = self._entities = Ros2Entities(self.node, name)
        entities.declare(
            outgoing_topics=self.core.outgoing_topics(),
            incoming_topics=list(self.core.incoming_topics()),
            qos=qos_profile(self.config),
            stop_service=resolve_topic(self.config.namespace, self.config.topics.stop)
            if self.config.stop_service
            else None,
            rosout=self.config.rosout,
        )

    # -- the stop service ------------------------------------------------------------------------

    def stop_service(self, _request: Any, response: Any) -> Any:
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

    def _start_diagnostics(self) -> None:
        if self.config.diagnostics_period_s is None:
            return
        self._collector()
        if self._entities is not None and self._entities.diag_timer is None:
            topic = resolve_topic(self.config.namespace, self.config.diagnostics_topic)
            self._entities.set_diagnostics(topic, self.config.diagnostics_period_s)

    def _collector(self) -> DiagnosticsCollector:
        """The diagnostics of this bridge's application (made once)."""
        if self.diagnostics is None:
            self.diagnostics = DiagnosticsCollector(
                node=self.node.get_name(),
                hardware_id=self.hardware_id,
                counters=self._counters,
                others=lambda: {name: c.snapshot() for name, c in self.other_bridges.items()},
            )
        return self.diagnostics

    def _counters(self) -> dict[str, int]:
        return {**self.core.counters.snapshot(), "goals_running": len(self.core.running_goals)}

    def set_diagnostics_period(self, period_s: float | None) -> None:
        """Publish diagnostics every ``period_s`` seconds from now on (None: stop publishing)."""
        entities = self._entities
        if entities is None or not self.running:
            return
        if period_s is not None and self.diagnostics is None:
            self._collector().attach(self.bus)
        entities.set_diagnostics(resolve_topic(self.config.namespace, self.config.diagnostics_topic), period_s)

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
        if self._entities is not None and not self._keep_entities:
            self._entities.quiet()
        if self._executor is not None:
            clean &= bool(self._executor.shutdown(timeout_sec=timeout_s))
        if self._spin_thread is not None:
            self._spin_thread.join(timeout_s)
            clean &= not self._spin_thread.is_alive()
            self._spin_thread = None
        if self.diagnostics is not None:
            self.diagnostics.close()
        entities, self._entities = self._entities, None
        if entities is not None and entities.serving is self:
            entities.serving = None
        if entities is not None and not self._keep_entities:
            # On a host node, remove only what we created; our own node goes entirely.
            entities.destroy(node_too=self._host_node is None)
        elif entities is None and self.node is not None and self._host_node is None:
            self.node.destroy_node()
        if self._context is not None:
            self._context.try_shutdown()
        self._executor = None
        return clean

    def __enter__(self) -> Ros2Bridge:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
