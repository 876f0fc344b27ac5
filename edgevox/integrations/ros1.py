"""ROS 1 bridge (rospy): the same topics and goal protocol as the ROS 2 bridge.

rospy is process-global: one node per process, created by ``rospy.init_node``. The
bridge either creates that node (``start()`` checks the master first, because
``init_node`` blocks forever without one, and always passes ``disable_signals=True`` so
it works off the main thread and installs no signal handlers), or, when the host
process already called ``init_node``, adds its publishers and subscribers to that node.

Threads: rospy runs each subscriber callback on its own thread; they only call
:meth:`RosBridgeCore.handle` (quick). Outgoing messages are published by the bridge's
own thread ``edgevox-ros1-pub``, woken through an event, never by agent or bus threads.

Python: Debian's ``python3-rospy`` lives in ``/usr/lib/python3/dist-packages``. When
rospy is not importable, ``python_path`` is put *first* on ``sys.path`` just for the
import of rospy and its messages, then moved to the end, so the process keeps its own
packages. One interpreter cannot load both ROS 1 and ROS 2 messages (both ship a
``std_msgs`` package): run the ROS 1 bridge in a process that has not imported rclpy.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
import threading
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from edgevox.errors import BridgeError, MissingDependencyError
from edgevox.integrations.config import Ros1BridgeConfig
from edgevox.integrations.events import BridgeStateEvent
from edgevox.integrations.limits import BridgeCounters
from edgevox.integrations.ros_common import RosBridgeCore, TextHandler
from edgevox.runtime.lifecycle import ComponentState, StopReport, component_lifecycle, stop_timeout

if TYPE_CHECKING:
    from edgevox.agents.skills import Skill, SkillExecutor
    from edgevox.runtime.bus import EventBus
    from edgevox.runtime.context import AgentContext

log = logging.getLogger(__name__)


def import_rospy(config: Ros1BridgeConfig) -> tuple[Any, Any]:
    """``(rospy, std_msgs.msg.String)`` of ROS 1, or a clear error."""
    loaded = sys.modules.get("std_msgs.msg")
    if loaded is not None and not hasattr(getattr(loaded, "String", None), "_md5sum"):
        raise BridgeError(
            "bridges.ros1: this process already loaded ROS 2's std_msgs (rclpy); one interpreter cannot "
            "load both ROS 1 and ROS 2 messages. Run the ROS 1 bridge in its own process (`edgevox ros1 CONFIG`)"
        )
    path = config.python_path
    added = False
    if path and os.path.isdir(path) and path not in sys.path[:1]:
        sys.path.insert(0, path)  # ROS 1's std_msgs must win over a ROS 2 wheel of the same name
        added = True
        importlib.invalidate_caches()
    try:
        import rospy
        from std_msgs.msg import String
    except ImportError as exc:
        raise MissingDependencyError(
            "python3-rospy",
            purpose="the ROS 1 bridge (apt-get install -y ros-core python3-rospy python3-rosmaster python3-std-msgs)",
        ) from exc
    finally:
        if added and path:
            sys.path.remove(path)
            sys.path.append(path)  # still findable for rospy's lazy imports, after our own packages
    if not hasattr(String, "_md5sum"):
        raise BridgeError(f"bridges.ros1: std_msgs was loaded from {String.__module__!r}, which is not ROS 1's")
    return rospy, String


class Ros1Bridge:
    """ROS 1 twin of :class:`~edgevox.integrations.ros2.Ros2Bridge` (same arguments, no ``node``)."""

    def __init__(
        self,
        bus: EventBus,
        config: Ros1BridgeConfig,
        *,
        on_text: TextHandler | None = None,
        on_say: TextHandler | None = None,
        skills: Iterable[Skill] | Mapping[str, Skill] = (),
        ctx: AgentContext | None = None,
        executor: SkillExecutor | None = None,
    ) -> None:
        self.config = config
        self.bus = bus
        self.core = RosBridgeCore(
            bus, config, bridge="ros1", on_text=on_text, on_say=on_say, skills=skills, ctx=ctx, executor=executor
        )
        self._rospy: Any = None
        self._publishers: dict[str, Any] = {}
        self._subscribers: list[Any] = []
        self._wake_event = threading.Event()
        self._pub_thread: threading.Thread | None = None
        self._own_node = False
        self._life = component_lifecycle("ROS 1 bridge", noun="bridge", error=BridgeError)
        self._lock = threading.Lock()

    @property
    def counters(self) -> BridgeCounters:
        """What the bridge received, refused and dropped (:data:`ros_common.COUNTERS`)."""
        return self.core.counters

    @property
    def running(self) -> bool:
        return self._life.state is ComponentState.RUNNING

    def _master_uri(self) -> str:
        return self.config.master_uri or os.environ.get("ROS_MASTER_URI", "http://localhost:11311")

    def start(self) -> Ros1Bridge:
        """Init the node (unless the host did), declare topics, start publishing. Returns self."""
        self._life.to(ComponentState.STARTING, "start()")
        try:
            rospy, string = import_rospy(self.config)
        except Exception:
            self._life.to(ComponentState.FAILED)
            raise
        self._rospy = rospy
        try:
            if not rospy.core.is_initialized():
                self._init_node(rospy)
            self._declare(rospy, string)
        except Exception as exc:
            self._unregister()
            self._life.to(ComponentState.FAILED)
            if isinstance(exc, BridgeError):
                raise
            raise BridgeError(f"bridges.ros1: cannot start the ROS 1 bridge: {exc}") from exc
        self.core.start(wake=self._wake_event.set)
        self._pub_thread = threading.Thread(
            target=self._publish_loop, args=(string,), name="edgevox-ros1-pub", daemon=True
        )
        self._pub_thread.start()
        self._life.to(ComponentState.RUNNING)
        self.core._publish(BridgeStateEvent(source="ros1", bridge="ros1", state="started", detail=self._describe()))
        return self

    def _describe(self) -> str:
        return f"node={self.config.node_name} master={self._master_uri()} namespace={self.config.namespace}"

    def _init_node(self, rospy: Any) -> None:
        import rosgraph

        # rospy reads these from the environment; config values win, the environment fills the rest.
        if self.config.master_uri:
            os.environ["ROS_MASTER_URI"] = self.config.master_uri
        if self.config.hostname:
            os.environ["ROS_HOSTNAME"] = self.config.hostname
        master_uri = self._master_uri()
        master = rosgraph.Master(f"/{self.config.node_name}", master_uri=master_uri)
        # init_node would block forever without a master: wait for it to answer, with a deadline.
        online = threading.Event()
        give_up = threading.Event()

        def probe() -> None:
            while not give_up.is_set():
                try:
                    if master.is_online():
                        online.set()
                        return
                except Exception:  # noqa: BLE001 - any failure means "not online yet"
                    pass
                give_up.wait(0.1)  # roscore takes ~1 s to come up; retry until the deadline

        checker = threading.Thread(target=probe, name="edgevox-ros1-probe", daemon=True)
        checker.start()
        online.wait(self.config.init_timeout_s)
        give_up.set()
        checker.join(1.0)
        if not online.is_set():
            raise BridgeError(
                f"bridges.ros1: no ROS master answers at {master_uri} within {self.config.init_timeout_s} s; "
                f"start `roscore` (or set bridges.ros1.master_uri / ROS_MASTER_URI)"
            )
        rospy.init_node(self.config.node_name, anonymous=False, disable_signals=True)
        self._own_node = True

    def _declare(self, rospy: Any, string: Any) -> None:
        depth = self.config.qos.depth
        latch = self.config.qos.durability == "transient_local"
        for topic in self.core.outgoing_topics():
            self._publishers[topic] = rospy.Publisher(topic, string, queue_size=depth, latch=latch)
        for topic in self.core.incoming_topics():
            self._subscribers.append(
                rospy.Subscriber(topic, string, lambda msg, _t=topic: self.core.handle(_t, msg.data), queue_size=depth)
            )

    def _publish_loop(self, string: Any) -> None:
        """The bridge's ROS thread: publish whatever the outbox holds, when woken."""
        while True:
            self._wake_event.wait()
            self._wake_event.clear()
            for topic, data in self.core.drain():
                publisher = self._publishers.get(topic)
                if publisher is not None:
                    try:
                        publisher.publish(string(data=data))
                    except Exception as exc:  # noqa: BLE001 - rospy shutting down under us
                        log.info("ROS 1 bridge: publish on %s failed: %r", topic, exc)
            if self._life.state in (ComponentState.STOPPING, ComponentState.STOPPED):
                return

    def stop(self, timeout_s: float | None = None, *, timeout: float | None = None) -> StopReport:
        """Cancel goals, unregister topics, stop the publisher thread (and the node if we made it)
        within ``timeout_s`` (default 3 s; ``timeout`` is EdgeVox's spelling). Truthy when clean."""
        timeout_s = stop_timeout(timeout_s, timeout, 3.0)
        with self._lock:
            if not self._life.to_if(ComponentState.STOPPING, ComponentState.RUNNING):
                self._life.to_if(ComponentState.STOPPED, ComponentState.NEW, ComponentState.FAILED)
                return StopReport()
        abandoned = [] if self.core.stop(timeout_s / 2) else ["ROS 1 bridge goals"]
        self._wake_event.set()
        if self._pub_thread is not None:
            self._pub_thread.join(timeout_s / 2)
            if self._pub_thread.is_alive():
                abandoned.append(self._pub_thread.name)
        self._unregister()
        if self._own_node:
            # rospy allows one node per process; after this the process cannot start another.
            self._rospy.signal_shutdown("edgevox ROS 1 bridge stopped")
        self._life.to(ComponentState.STOPPED)
        self.core._publish(BridgeStateEvent(source="ros1", bridge="ros1", state="stopped", detail=self._describe()))
        return StopReport.abandoned_threads(abandoned)

    def _unregister(self) -> None:
        for sub in self._subscribers:
            sub.unregister()
        for pub in self._publishers.values():
            pub.unregister()
        self._subscribers.clear()
        self._publishers.clear()

    def __enter__(self) -> Ros1Bridge:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
