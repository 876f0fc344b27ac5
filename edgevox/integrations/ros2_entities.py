"""The ROS 2 entities of a bridge on its node, and which bridge they serve now.

:class:`Ros2Bridge` declares on its node one publisher per outgoing topic, one subscription per
incoming topic, the ``stop`` Trigger service, the ``/diagnostics`` publisher and timer, the
``/rosout`` publisher and a guard condition that publishes the outbox on an executor thread.
They live here, with the callbacks ROS calls, so that they can outlive one application:

* a plain node creates them when its bridge starts and destroys them when it stops;
* a **managed node keeps them across ``deactivate``/``activate``** (ROS's convention: an
  inactive node's topics and services stay, its lifecycle publishers are deactivated, not
  destroyed), so subscribers and service clients stay matched. The bridge of the stopped
  application hands them over (:meth:`Ros2Bridge.detach`), and the next application's bridge
  takes them (:meth:`Ros2Bridge.adopt`).

While no bridge serves them (the node is inactive): an incoming message is not acted on (counted
in :attr:`Ros2Entities.ignored`, one log line per 5 s says to activate the node), the stop service
answers that nothing runs, nothing is published but edgevox's log records on ``/rosout``, and
``/diagnostics`` says ``inactive``.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any

from edgevox.integrations.limits import BadInputLog
from edgevox.integrations.ros2_diagnostics import OK, Status, to_message
from edgevox.integrations.ros2_rosout import ROSOUT_TOPIC, RosoutHandler

if TYPE_CHECKING:
    from edgevox.integrations.ros2 import Ros2Bridge

log = logging.getLogger(__name__)


class Ros2Entities:
    """What a bridge created on ``node`` (see the module docstring). ``serving`` is the bridge
    whose core handles the callbacks now, or None while the node is inactive."""

    def __init__(self, node: Any, name: str) -> None:
        self.node = node
        self.name = name
        """``<namespace>/<node name>``, for /rosout and the log lines."""
        self.serving: Ros2Bridge | None = None
        self.hardware_id = ""
        self.publishers: dict[str, Any] = {}
        self.subscriptions: list[Any] = []
        self.guard: Any = None
        self.service: Any = None
        self.outgoing: Any = None
        """The callback group of everything that publishes (one at a time)."""
        self.incoming: Any = None
        self.diag_publisher: Any = None
        self.diag_timer: Any = None
        self.diag_lock = threading.Lock()
        self.rosout: RosoutHandler | None = None
        self.rosout_publisher: Any = None
        self.ignored = 0
        self.destroyed = False
        self._bad = BadInputLog(log, f"ROS 2 node {name}")

    # -- declaring ---------------------------------------------------------------------------------

    def declare(
        self,
        *,
        outgoing_topics: list[str],
        incoming_topics: list[str],
        qos: Any,
        stop_service: str | None,
        rosout: bool,
    ) -> None:
        from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
        from std_msgs.msg import String

        node = self.node
        self.incoming = ReentrantCallbackGroup()
        self.outgoing = MutuallyExclusiveCallbackGroup()
        for topic in outgoing_topics:
            self.publishers[topic] = node.create_publisher(String, topic, qos)
        for topic in incoming_topics:
            self.subscriptions.append(
                node.create_subscription(
                    String,
                    topic,
                    lambda msg, _t=topic: self.on_message(_t, msg.data),
                    qos,
                    callback_group=self.incoming,
                )
            )
        # trigger() is thread-safe; the callback runs on an executor thread and publishes there.
        self.guard = node.create_guard_condition(self.flush, callback_group=self.outgoing)
        if stop_service is not None:
            from std_srvs.srv import Trigger

            self.service = node.create_service(
                Trigger, stop_service, self.on_stop_service, callback_group=self.incoming
            )
        if rosout:
            from rcl_interfaces.msg import Log
            from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

            rosout_qos = QoSProfile(
                depth=1000, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
            )
            self.rosout_publisher = node.create_publisher(Log, ROSOUT_TOPIC, rosout_qos)
            self.rosout = RosoutHandler(self.name, self.wake)
            logging.getLogger("edgevox").addHandler(self.rosout)

    def set_diagnostics(self, topic: str, period_s: float | None) -> None:
        """Publish diagnostics on ``topic`` every ``period_s`` seconds from now on (None: never)."""
        from diagnostic_msgs.msg import DiagnosticArray

        with self.diag_lock:
            if self.diag_timer is not None:
                self.node.destroy_timer(self.diag_timer)
                self.diag_timer = None
            if period_s is None:
                return
            if self.diag_publisher is None:
                self.diag_publisher = self.node.create_publisher(DiagnosticArray, topic, 10)
            self.diag_timer = self.node.create_timer(period_s, self.on_diagnostics, callback_group=self.outgoing)

    # -- callbacks (executor threads) ----------------------------------------------------------------

    def on_message(self, topic: str, data: str) -> None:
        bridge = self.serving
        if bridge is not None:
            bridge.core.handle(topic, data)
            return
        self.ignored += 1
        self._bad.warn("inactive", f"message on {topic} not acted on: the node is inactive; activate it first")

    def on_stop_service(self, request: Any, response: Any) -> Any:
        bridge = self.serving
        if bridge is not None:
            return bridge.stop_service(request, response)
        response.success, response.message = True, "stopped: nothing was running (the node is inactive)"
        return response

    def wake(self) -> None:
        guard = self.guard
        if guard is not None:
            guard.trigger()

    def flush(self) -> None:
        """Publish the serving bridge's outbox, and edgevox's log records on /rosout."""
        from std_msgs.msg import String

        if self.destroyed:
            return
        bridge = self.serving
        try:
            for topic, data in bridge.core.drain() if bridge is not None else ():
                publisher = self.publishers.get(topic)
                if publisher is not None:
                    msg = String()
                    msg.data = data
                    publisher.publish(msg)
            rosout, rosout_publisher = self.rosout, self.rosout_publisher
            if rosout is not None and rosout_publisher is not None:
                from rcl_interfaces.msg import Log

                for record in rosout.drain():
                    rosout_publisher.publish(rosout.message(record, Log))
        except Exception as exc:  # noqa: BLE001 - a publisher destroyed under us (stopping); never raise into rclpy
            if not self.destroyed:
                log.warning("ROS 2 bridge: outgoing messages not published: %r", exc)

    def on_diagnostics(self) -> None:
        bridge, publisher = self.serving, self.diag_publisher
        if publisher is None:
            return
        try:
            if bridge is not None:
                statuses = bridge.diagnostics.statuses() if bridge.diagnostics is not None else []
                self.hardware_id = bridge.hardware_id
            else:
                node = self.node.get_name()
                statuses = [Status(OK, f"{node}: voice", "inactive", {"state": "inactive"})]
            publisher.publish(to_message(statuses, self.hardware_id, self.node.get_clock().now().to_msg()))
        except Exception as exc:  # noqa: BLE001 - an exception would end the executor's spin
            log.warning("ROS 2 diagnostics not published: %r", exc)

    # -- the end -------------------------------------------------------------------------------------

    def quiet(self) -> None:
        """Stop taking edgevox's log records for /rosout (first, before the executor stops: a
        record logged while it shuts down would otherwise wake a callback on a closing executor)."""
        if self.rosout is not None:
            logging.getLogger("edgevox").removeHandler(self.rosout)
            self.rosout = None

    def destroy(self, *, node_too: bool) -> None:
        """Remove every entity from the node (and the node itself when it is the bridge's own)."""
        if self.destroyed:
            return
        self.destroyed = True
        self.quiet()
        self.serving = None
        node = self.node
        for sub in self.subscriptions:
            node.destroy_subscription(sub)
        for pub in self.publishers.values():
            node.destroy_publisher(pub)
        if self.guard is not None:
            node.destroy_guard_condition(self.guard)
        with self.diag_lock:
            if self.diag_timer is not None:
                node.destroy_timer(self.diag_timer)
            if self.diag_publisher is not None:
                node.destroy_publisher(self.diag_publisher)
            self.diag_timer = self.diag_publisher = None
        if self.service is not None:
            node.destroy_service(self.service)
        if self.rosout_publisher is not None:
            node.destroy_publisher(self.rosout_publisher)
        self.subscriptions.clear()
        self.publishers.clear()
        self.guard = self.service = self.rosout_publisher = None
        if node_too:
            node.destroy_node()
