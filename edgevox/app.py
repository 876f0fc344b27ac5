"""An edgevox application: everything a config describes, built, started and stopped as one.

::

    app = App.build(load_config("default"))     # loads models (may take seconds)
    app.start()                                 # opens devices, starts threads; returns
    app.submit_text("what time is it?")         # or speak into the microphone
    app.wait_idle(30)
    report = app.stop(timeout_s=2.0)            # a StopReport: truthy when every thread finished

:meth:`App.build` does the wiring through :mod:`edgevox.config.build` (the one place
config becomes objects): engines, agents and workflows, background agents, orchestration,
the voice loop and bridges. This module keeps the lifecycle only. Engines can be injected
(``engines=Engines(llm=ScriptedLLM(...))``), which is how tests run whole applications
without models.

Typed input (``audio.input.source: text``) and no audio output (``audio.output.sink:
none``) still run the same :class:`~edgevox.voice.loop.VoiceLoop`, with the null engines
of :mod:`edgevox.engines.null`, so the safety stop, turn ids and events are identical.
``edgevox check`` lives in :mod:`edgevox.check`.

Lifecycle (a :class:`~edgevox.runtime.lifecycle.ComponentState` machine; illegal moves raise
:class:`~edgevox.errors.LifecycleError`)::

    NEW --start()--> STARTING --> RUNNING --stop()--> STOPPING --> STOPPED
                         +-- a part fails to start: everything is stopped, start() raises

Threads: ``build``/``start``/``stop`` run on the caller's thread; the voice loop,
background agents and bridges run their own (see their modules). ``add_observer``
callbacks run on whichever thread publishes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from edgevox.config import build as wiring
from edgevox.config.build import Engines, LoadedEngines, Progress, Steps
from edgevox.config.build_orchestration import (
    OrchestrationParts,
    make_delegator,
    make_orchestration,
    wants_orchestration,
)
from edgevox.config.loader import config_folder
from edgevox.config.refs import search_folders
from edgevox.config.schema import AppConfig
from edgevox.dashboard import make_dashboard
from edgevox.errors import EdgeVoxError
from edgevox.runtime.events import Event, InterruptEvent, StopEvent
from edgevox.runtime.lifecycle import (
    Closable,
    Component,
    ComponentState,
    SharedStop,
    StopReport,
    component_lifecycle,
    stop_timeout,
)
from edgevox.runtime.runtime import Runtime

if TYPE_CHECKING:
    from edgevox.agents.base import Agent
    from edgevox.dashboard.server import Dashboard
    from edgevox.orchestration.delegation import Delegator
    from edgevox.orchestration.delivery import DeliveryItem
    from edgevox.runtime.background import BackgroundAgent
    from edgevox.runtime.bus import Subscription
    from edgevox.voice.loop import VoiceLoop

__all__ = ["App", "Engines", "Progress"]

SETTLE_CHECK_S = 0.05
""":meth:`App.wait_settled`: how long the application must look settled (two looks this far
apart), and how often it looks when there is nothing registered to wait on."""


class App:
    """A built application. Create with :meth:`build`; ``start()``, then ``stop()``.

    ``runtime`` owns the bus, blackboard, supervisor and agent pool; ``agents`` are every
    configured agent and workflow by name; ``agent`` answers the user's turns (the main
    agent, or the orchestration :class:`~edgevox.orchestration.coordinator.Coordinator`
    when ``orchestration.strategy`` is not ``single``).
    """

    def __init__(
        self,
        config: AppConfig,
        *,
        runtime: Runtime,
        engines: LoadedEngines,
        agents: dict[str, Agent],
        loop: VoiceLoop,
        background: list[BackgroundAgent],
        bridges: list[tuple[str, Component]],
        orchestration: OrchestrationParts | None = None,
        delegator: Delegator | None = None,
    ) -> None:
        self.config = config
        self.delegator = delegator
        """What agents' ``delegates:`` lists delegate through (None when no agent delegates)."""
        self.runtime = runtime
        self.bus = runtime.bus
        self.blackboard = runtime.blackboard
        self.pool = runtime.pool
        self.engines = engines
        self.agents = agents
        self.orchestration = orchestration
        self.agent = orchestration.coordinator if orchestration else agents[config.main_agent]
        self.loop = loop
        self.background = background
        self.bridges = bridges
        self.delivery = orchestration.delivery if orchestration else None
        """The :class:`~edgevox.orchestration.delivery.DeliveryWorker` speaking background results."""
        self.voice_activity = orchestration.voice_activity if orchestration else None
        self.stop_report = StopReport()
        """What the last :meth:`stop` left behind (``parts`` by component); empty means clean."""
        self._life = component_lifecycle(f"App {config.name!r}", noun="App")
        self._stops: SharedStop[StopReport] = SharedStop(self._still_running)
        self._observers: list[Subscription] = []
        self.dashboard: Dashboard | None = make_dashboard(config.dashboard, self) if config.dashboard.enabled else None
        """The live web dashboard (``dashboard.enabled``); serving from :meth:`start`, ``dashboard.url``."""

    @property
    def state(self) -> ComponentState:
        return self._life.state

    # --- building -----------------------------------------------------------------------------

    @classmethod
    def build(cls, config: AppConfig, *, on_progress: Progress | None = None, engines: Engines | None = None) -> App:
        """Load the engines and build every part (caller's thread; loading models takes seconds).
        ``module:function`` references are also looked for beside the config file (:mod:`edgevox.config.refs`)."""
        with search_folders(config_folder(config)):
            return cls._build(config, on_progress, engines)

    @classmethod
    def _build(cls, config: AppConfig, on_progress: Progress | None, engines: Engines | None) -> App:
        step = Steps(on_progress)
        built = wiring.make_engines(config, engines, step=step)
        delegator = make_delegator(config.orchestration, {n: c.delegates for n, c in config.agents.items()})
        agents = step("agents", lambda: wiring.make_agents(config, built.llm, delegator=delegator))
        runtime = Runtime(config.name, max_concurrency=config.pool.max_concurrency)
        try:
            return cls._assemble(config, runtime, built, agents, step, delegator)
        except BaseException:
            runtime.stop(1.0)
            _close_agents(agents, 1.0)
            if delegator is not None:
                delegator.close(1.0)
            raise

    @classmethod
    def _assemble(
        cls,
        config: AppConfig,
        runtime: Runtime,
        built: LoadedEngines,
        agents: dict[str, Agent],
        step: Steps,
        delegator: Delegator | None = None,
    ) -> App:
        """Everything after the engines: pool, background agents, orchestration, loop, bridges."""
        wiring.register_agents(config, agents, runtime.pool)
        background = [wiring.start_background_agent(bg, agents, runtime.pool) for bg in config.background_agents]
        main = agents[config.main_agent]
        speak = _LateSpeaker()
        orchestration = None
        if wants_orchestration(config.orchestration):
            orchestration = make_orchestration(
                config.orchestration, agents, main_agent=config.main_agent, runtime=runtime, speak=speak
            )
        answering = orchestration.coordinator if orchestration else main
        loop = speak.loop = wiring.make_voice_loop(config, runtime, built, answering)
        bridges = wiring.make_bridges(
            config.bridges,
            runtime,
            on_text=loop.submit_text,
            on_say=loop.say,
            main=main,
            main_name=config.main_agent,
        )
        wiring.warm_up(main, built, step)
        return cls(
            config,
            runtime=runtime,
            engines=built,
            agents=agents,
            loop=loop,
            background=background,
            bridges=bridges,
            orchestration=orchestration,
            delegator=delegator,
        )

    # --- lifecycle ----------------------------------------------------------------------------

    def add_observer(self, fn: Callable[[Event], object]) -> None:
        """``fn(event)`` sees every event on the bus (publisher's thread)."""
        self._observers.append(self.bus.add_observer(fn))

    def start(self) -> App:
        """Start the runtime (background agents), bridges, delivery and the voice loop; returns self.

        If a part fails to start, everything started is stopped and the error is raised."""
        self._life.to(ComponentState.STARTING, "start()")
        try:
            # The language floor's models load here, not in the first turn (~3 s on 2 cores).
            from edgevox.language import warm_up

            warm_up(lexicon=any(a.tools or a.skills or a.factory for a in self.config.agents.values()))
            self.runtime.start()
            if self.dashboard is not None:
                self.dashboard.start()
            for _name, bridge in self.bridges:
                bridge.start()
            if self.voice_activity is not None:
                self.voice_activity.attach(self.bus)
            if self.delivery is not None:
                self.delivery.start()
            self.loop.start()
            self._observers.append(self.bus.subscribe((StopEvent, InterruptEvent), self._external_control))
        except BaseException:
            self.stop(timeout_s=self.config.runtime.shutdown_timeout_s)
            raise
        self._life.to(ComponentState.RUNNING)
        return self

    def _external_control(self, event: Event) -> None:
        """A stop or interrupt published by someone else (a ROS topic, a Zenoh peer, a
        background agent watching a bumper) acts on the voice loop like a spoken one.
        Runs on the publisher's thread; the loop's own events are ignored (no echo)."""
        if event.source == self.loop.name or not isinstance(event, (StopEvent, InterruptEvent)):
            return
        if not self.loop.running:
            return  # the runtime itself cancelled every registered activity on this StopEvent
        if isinstance(event, StopEvent):
            self.loop.safety_stop(reason=event.reason or f"stop from {event.source}", text=event.text, announce=False)
        else:
            self.loop.interrupt()

    def submit_text(self, text: str, *, channel: str = "text") -> int:
        """A typed user turn (the safety stop is checked first); ``channel`` names where it came
        from (what routing rules' ``channel_types`` match). Returns its turn id."""
        return self.loop.submit_text(text, channel=channel)

    def say(self, text: str) -> int:
        """Speak ``text`` as the robot, after any turn in progress. Returns its turn id."""
        return self.loop.say(text)

    def wait_idle(self, timeout_s: float | None) -> bool:
        """Block until nothing is queued, running or playing; True if idle in time."""
        return self.loop.wait_idle(1e9 if timeout_s is None else timeout_s)

    def wait_input_ended(self, timeout_s: float | None) -> bool:
        """For a WAV input: wait until it is exhausted and everything it started is answered."""
        return self.loop.wait_input_done(1e9 if timeout_s is None else timeout_s)

    def wait_settled(self, timeout_s: float) -> list[str]:
        """Block until the work the turns started has ended too: the voice loop is idle, no
        activity is registered (skills, tool calls, background agents' runs, delegated
        workers), no background agent has an event queued and no delivery is pending; and
        that holds on two looks ``SETTLE_CHECK_S`` apart (a finished skill's event reaches a
        background agent, a delivered answer becomes a turn). Returns ``[]`` when settled within
        ``timeout_s``, else what still runs then (``["skill go_to"]``), for a headless run
        that exits now to name what its exit cancels."""
        end = time.monotonic() + max(0.0, timeout_s)
        quiet_since: float | None = None
        while True:
            left = end - time.monotonic()
            busy = self._busy()
            if self.state is not ComponentState.RUNNING:
                return busy  # stopping: nothing more will end on its own
            now = time.monotonic()
            if not busy:
                quiet_since = now if quiet_since is None else quiet_since
                if now - quiet_since >= SETTLE_CHECK_S:
                    return []
            else:
                quiet_since = None
            if left <= 0:
                return busy
            running = self.runtime.activities.running()
            step = min(left, SETTLE_CHECK_S)
            if running:
                running[0].wait(step)  # wakes as soon as the oldest ends
            else:
                time.sleep(step)  # a queued event, a pending delivery, or the second look

    def _busy(self) -> list[str]:
        """What keeps the application from being settled, by name (see :meth:`wait_settled`)."""
        out = [] if self.loop.wait_idle(0.0) else ["a voice turn"]
        out += [a.label for a in self.runtime.activities.running() if a.kind != "turn"]
        out += [f"background agent {bg.name} (queued events)" for bg in self.background if bg.queued]
        if self.delivery is not None and self.delivery.strategy.pending:
            out.append("a delivery")
        return out

    @property
    def idle(self) -> bool:
        return self.loop.wait_idle(0.0)

    def stop(self, timeout_s: float | None = None, *, timeout: float | None = None) -> StopReport:
        """Stop everything within ``timeout_s`` (default 2 s; ``timeout`` is EdgeVox's spelling)
        in total. Returns a :class:`StopReport`, truthy when every thread finished.

        Order: the voice loop (no new turns), delivery, bridges, orchestration and agents'
        skill workers, then the runtime (background agents, blackboard, bus). The report
        (also kept in :attr:`stop_report`) nests each component's under ``parts`` and lists
        whatever had to be abandoned. A later ``stop()`` returns the same report. Safe from
        many threads at once: the first caller stops, the others wait (each up to its own
        timeout) for its report, or get one saying the stop is still in progress.
        """
        return self._stops.run(stop_timeout(timeout_s, timeout, 2.0), self._stop)

    def _still_running(self) -> StopReport:
        return StopReport.abandoned_threads([f"App {self.config.name!r} (stop in progress)"])

    def _stop(self, deadline: float | None) -> StopReport:
        if not self._life.to_if(ComponentState.STOPPING, ComponentState.NEW, ComponentState.STARTING):
            if not self._life.to_if(ComponentState.STOPPING, ComponentState.RUNNING):
                return self.stop_report  # already stopped
        end = time.monotonic() + 2.0 if deadline is None else deadline

        def left() -> float:
            return max(0.05, end - time.monotonic())

        parts: dict[str, StopReport] = {"voice": self.loop.stop(timeout_s=left())}
        if self.delivery is not None:
            parts["delivery"] = StopReport() if self.delivery.stop(left()) else _abandoned("delivery worker")
        if self.voice_activity is not None:
            self.voice_activity.detach()
        for name, bridge in self.bridges:
            try:
                parts[f"bridge {name}"] = bridge.stop(left())
            except EdgeVoxError as exc:
                parts[f"bridge {name}"] = _abandoned(f"bridge {name} ({exc})")
        if self.orchestration is not None:
            parts["orchestration"] = _abandoned(*self.orchestration.coordinator.close(left()))
        if self.delegator is not None:  # background delegations (``delegate(..., background=true)``)
            for handle in self.delegator.processes():
                handle.cancel("app stopping")
            parts["delegation"] = _abandoned(*self.delegator.close(left()))
        parts["agents"] = _abandoned(*_close_agents(self.agents, left()))
        for obs in self._observers:
            obs.close()
        if self.dashboard is not None:
            parts["dashboard"] = self.dashboard.stop(left())
        parts["runtime"] = self.runtime.stop(left())
        self.stop_report = StopReport.nest(parts)
        self._life.to(ComponentState.STOPPED)
        return self.stop_report


def _abandoned(*names: str) -> StopReport:
    return StopReport.abandoned_threads(names)


class _LateSpeaker:
    """Delivery sink: speaks delivered results through the voice loop (set once it exists)."""

    loop: VoiceLoop | None = None

    def __call__(self, items: list[DeliveryItem]) -> None:
        text = " ".join(i.text.strip() for i in items if i.text.strip())
        if text and self.loop is not None and self.loop.running:
            self.loop.say(text)


def _close_agents(agents: dict[str, Agent], timeout_s: float) -> list[str]:
    """Close every agent that has ``close`` (LLM agents' skill workers); names of the unclean."""
    out: list[str] = []
    for name, agent in agents.items():
        if isinstance(agent, Closable):
            try:
                if agent.close(timeout_s) is False:
                    out.append(f"agent {name!r} skill workers")
            except Exception as exc:  # noqa: BLE001 - one agent's failure must not stop the shutdown
                out.append(f"agent {name!r} ({exc!r})")
    return out
