"""The managed (lifecycle) variant of the application node: ``edgevox ros2 CONFIG --lifecycle``.

A ``rclpy.lifecycle.LifecycleNode`` (``lifecycle_msgs/srv/ChangeState``, ``GetState``... under
the node's name, e.g. ``/edgevox/edgevox/change_state``) whose transitions drive the App::

    unconfigured --configure--> inactive --activate--> active
         ^    <----cleanup----    |  ^  <--deactivate--   |
         +------------------------+--+---- shutdown ------+--> finalized

* ``configure``: validate the config with the current parameters, build the App (load the
  models). Nothing listens or publishes yet.
* ``activate``: open the devices, start the voice loop and the bridge (topics, the ``stop``
  service, diagnostics). After a ``deactivate`` the App is rebuilt around the loaded engines
  (no model is loaded again; the conversation starts afresh) and its bridge serves the topics
  and services that stayed.
* ``deactivate``: pause, the ROS way: the App stops (devices closed, turns and skills
  cancelled), the models stay, and so do the topics and services (``ros2_entities.py``): they
  stay matched, nothing is published but ``/rosout``, an incoming message is not acted on (one
  log line says to activate the node), the stop service answers that nothing runs and
  ``/diagnostics`` says ``inactive``.
* ``cleanup``: release the App, the models, and the topics and services.
* ``shutdown`` (from any state): stop everything; the App's ``StopReport`` is logged and kept in
  :attr:`Ros2LifecycleAppNode.stop_report`; ``edgevox ros2`` then exits.

A transition that fails (a bad config, a model that does not load, a device that does not open)
logs one line saying why and returns ``FAILURE``: the node stays in the state it was in.
Anything unexpected returns ``ERROR`` (rclpy then runs ``on_error``, which releases the App
and returns to ``unconfigured``). Nothing raises into rclpy.

Parameters: every key may be set while unconfigured (it is used at ``configure``); live keys
also later; the others are refused until ``cleanup``.

Transitions run on an executor thread of the node's default callback group (one at a time);
the bridge's stop service has its own group, so a stop is answered during a transition.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from edgevox.errors import EdgeVoxError
from edgevox.integrations.ros2_node import Ros2AppNode

if TYPE_CHECKING:
    from edgevox.config.build import LoadedEngines
    from edgevox.integrations.ros2_entities import Ros2Entities

log = logging.getLogger(__name__)


class Ros2LifecycleAppNode(Ros2AppNode):
    """An application in a managed ROS 2 node (see the module docstring). :meth:`start` only
    creates the node, unconfigured; a lifecycle manager (or ``ros2 lifecycle set``) drives it."""

    managed = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.loaded: LoadedEngines | None = None
        """The engines of the configured application, kept across deactivate/activate."""
        self.paused: Ros2Entities | None = None
        """The topics and services of a deactivated application, kept for the next activate."""

    def start(self) -> Ros2LifecycleAppNode:
        self._open()
        self._spin_up()
        return self

    def _make_node(self, name: str, namespace: str) -> Any:
        from rclpy.lifecycle import LifecycleNode, TransitionCallbackReturn

        host = self

        class _Node(LifecycleNode):
            """Forwards each transition to the host; a callback never raises into rclpy."""

            def _run(self, what: str, fn: Any) -> TransitionCallbackReturn:
                try:
                    fn()
                except EdgeVoxError as exc:
                    log.error("%s failed: %s", what, exc)
                    return TransitionCallbackReturn.FAILURE
                except Exception as exc:  # noqa: BLE001 - reported to the lifecycle manager as ERROR
                    log.exception("%s failed: %r", what, exc)
                    return TransitionCallbackReturn.ERROR
                log.info("%s done", what)
                return TransitionCallbackReturn.SUCCESS

            def on_configure(self, state: Any) -> TransitionCallbackReturn:
                return self._run("configure (load the models)", host.configure)

            def on_activate(self, state: Any) -> TransitionCallbackReturn:
                return self._run("activate (open the devices, start listening)", host.activate)

            def on_deactivate(self, state: Any) -> TransitionCallbackReturn:
                return self._run("deactivate (stop listening, keep the models)", host.deactivate)

            def on_cleanup(self, state: Any) -> TransitionCallbackReturn:
                return self._run("cleanup (release the application)", host.cleanup)

            def on_shutdown(self, state: Any) -> TransitionCallbackReturn:
                return self._run("shutdown", host.shutdown)

            def on_error(self, state: Any) -> TransitionCallbackReturn:
                return self._run("error recovery (release the application)", host.cleanup)

        return _Node(name, namespace=namespace, context=self._context, cli_args=["--ros-args", *self.ros_args])

    # -- transitions (executor thread) ----------------------------------------------------------

    def configure(self) -> None:
        with self._app_lock:
            app = self._build()  # raises ConfigError / ModelError: FAILURE, still unconfigured
            self.app, self.loaded = app, app.engines

    def activate(self) -> None:
        from edgevox.config.build import Engines

        with self._app_lock:
            app = self.app
            if app is None:  # after a deactivate: the same models, fresh devices and threads
                kept = self.loaded
                if kept is None:
                    raise EdgeVoxError("activate: the node is not configured; configure it first")
                given = self.engines or Engines()  # injected devices (tests) are reused; others open afresh
                app = self._build(replace(given, stt=kept.stt, llm=kept.llm, tts=kept.tts, vad=kept.vad))
            self.app = None
            bridge = self.bridge_of(app)
            if bridge is not None and self.paused is not None:
                bridge.adopt(self.paused)  # the topics and services that stayed while inactive
            try:
                self._start_app(app)  # a device that does not open: start() stops everything and raises
            except BaseException:
                if self.paused is not None and self.paused.destroyed:
                    self.paused = None  # the failed start removed them; the next activate declares them
                raise
            self.app, self.paused = app, None

    def deactivate(self) -> None:
        with self._app_lock:
            app, self.app = self.app, None
            bridge = self.bridge_of(app)
            if bridge is not None:
                self.paused = bridge.detach()  # the topics and services stay, serving nothing
            if app is not None:
                self.stop_report = app.stop(timeout_s=self.config.runtime.shutdown_timeout_s)
                if not self.stop_report:
                    log.warning("deactivate: %s", self.stop_report)

    def cleanup(self) -> None:
        with self._app_lock:
            app, self.app, self.loaded = self.app, None, None
            paused, self.paused = self.paused, None
            if app is not None:
                self.stop_report = app.stop(timeout_s=self.config.runtime.shutdown_timeout_s)
            if paused is not None:
                paused.destroy(node_too=False)

    def shutdown(self) -> None:
        self.cleanup()
        log.info("shutdown: %s", self.stop_report or "clean")
        self.finished.set()

    def _locked(self) -> bool:
        """Read-only parameters are refused once configured (until cleanup)."""
        return self.loaded is not None
