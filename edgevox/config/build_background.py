"""Background agents from the config: ``background_agents:`` entries become
:class:`~edgevox.runtime.BackgroundAgent` children of the runtime's pool, each with its
trigger (a ``module:function`` reference or a templated task, optionally debounced).
Part of the wiring in :mod:`edgevox.config.build`.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from edgevox.config.refs import import_ref
from edgevox.config.schema import BackgroundAgentConfig
from edgevox.errors import ConfigError

if TYPE_CHECKING:
    from edgevox.agents.base import Agent
    from edgevox.runtime.background import BackgroundAgent
    from edgevox.runtime.events import Event
    from edgevox.runtime.pool import AgentPool


@dataclass
class TemplateTrigger:
    """``event -> task``: fills ``{field}`` placeholders of ``template`` from the event's fields.

    Fields are those of ``Event.to_dict()`` (``kind``, ``source``, ``text``...). A missing
    field leaves the event unanswered (None) rather than running a half-filled task, and
    is counted in ``missing``.
    """

    template: str
    fields: tuple[str, ...] = field(init=False)
    missing: int = 0

    def __post_init__(self) -> None:
        try:
            self.fields = tuple(f for _, f, _, _ in string.Formatter().parse(self.template) if f)
        except ValueError as exc:
            raise ConfigError(f"trigger task template {self.template!r}: {exc}") from None

    def __call__(self, event: Event) -> str | None:
        try:
            return self.template.format_map(event.to_dict())
        except (KeyError, IndexError, AttributeError, ValueError, TypeError):  # a field missing or of another type
            self.missing += 1
            return None


def make_trigger(cfg: BackgroundAgentConfig) -> Callable[[Event], object]:
    where = f"background_agents.{cfg.name}.trigger"
    trigger: Callable[[Event], object]
    if cfg.trigger.function:
        trigger = import_ref(cfg.trigger.function, where=f"{where}.function")
        if not callable(trigger):
            raise ConfigError(f"{where}.function: {cfg.trigger.function!r} is not callable")
    else:
        trigger = TemplateTrigger(cfg.trigger.task or "")
    if cfg.trigger.debounce_s > 0:
        from edgevox.runtime import debounce_trigger

        trigger = debounce_trigger(trigger, cfg.trigger.debounce_s, edge="trailing")
    return trigger


def start_background_agent(cfg: BackgroundAgentConfig, agents: Mapping[str, Agent], pool: AgentPool) -> BackgroundAgent:
    """Add the background agent to ``pool`` (supervised by the pool's supervisor; it starts
    with the runtime). Returns the :class:`~edgevox.runtime.BackgroundAgent`."""
    patterns = tuple(cfg.trigger.events)
    agent = agents[cfg.agent]
    return pool.start_background(
        cfg.name,
        trigger=make_trigger(cfg),
        subscribe_to=patterns if len(patterns) > 1 else patterns[0],
        max_queue=cfg.max_queue,
        overflow=cfg.overflow,
        restart=cfg.restart,
        max_restarts=cfg.max_restarts,
        restart_window_s=cfg.restart_window_s,
        factory=lambda: agent,  # the configured agent object; each incarnation gets a fresh context
    )
