"""Typed config of the live web dashboard: the ``dashboard`` section of the YAML.

::

    dashboard:
      enabled: true        # or `edgevox run CONFIG --dashboard`
      host: 127.0.0.1      # loopback only unless allow_remote: true
      port: 8765           # 0 = any free port (the URL is printed and logged)

Importing this module imports neither starlette nor uvicorn (the schema imports it).
"""

from __future__ import annotations

import ipaddress
from typing import Annotated

from pydantic import Field, StrictBool, StrictFloat, StrictInt, StrictStr, model_validator

from edgevox.config.fields import MIN_PERIOD_S, Section

DEFAULT_MAX_EVENTS = 500
DEFAULT_MAX_TURNS = 100
DEFAULT_MAX_SKILLS = 50
DEFAULT_CLIENT_QUEUE = 2000
DEFAULT_MAX_PAGES = 16
DEFAULT_BUS_QUEUE = 4096
DEFAULT_REFRESH_S = 0.5

LOOPBACK_NAMES = ("localhost",)


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or ``localhost``) is this machine only."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class DashboardConfig(Section):
    """The live web dashboard: conversation with latency waterfalls, bus events, supervision,
    background agents, blackboard, running skills with a Stop button (``docs/dashboard.md``)."""

    enabled: StrictBool = Field(
        False, description="Serve the dashboard while the application runs (`edgevox run CONFIG --dashboard`)."
    )
    host: StrictStr = Field(
        "127.0.0.1",
        description="Address to listen on. Loopback by default; any other address needs `allow_remote: true`.",
    )
    port: Annotated[StrictInt, Field(ge=0, le=65535)] = Field(
        8765, description="TCP port; 0 = any free port (the URL is printed and logged, and is `app.dashboard.url`)."
    )
    allow_remote: StrictBool = Field(
        False,
        description="Allow a non-loopback `host` (the page shows everything the robot hears and does; a warning is logged). The Stop button still only answers loopback clients.",
    )
    max_events: Annotated[StrictInt, Field(ge=10, le=100_000)] = Field(
        DEFAULT_MAX_EVENTS, description="Bus events kept for the event panel (stream events such as tokens excluded)."
    )
    max_turns: Annotated[StrictInt, Field(ge=1, le=100_000)] = Field(
        DEFAULT_MAX_TURNS, description="Conversation turns (with their latency marks) kept for the page and the plot."
    )
    max_skills: Annotated[StrictInt, Field(ge=1, le=10_000)] = Field(
        DEFAULT_MAX_SKILLS, description="Finished skill goals kept in the skills panel (running ones are always shown)."
    )
    client_queue: Annotated[StrictInt, Field(ge=10, le=1_000_000)] = Field(
        DEFAULT_CLIENT_QUEUE,
        description="Messages queued per open page; a page whose queue fills is cut off (counted) and its browser reconnects to a fresh snapshot.",
    )
    max_pages: Annotated[StrictInt, Field(ge=1, le=1000)] = Field(
        DEFAULT_MAX_PAGES,
        description="Most pages streaming at once; one more is refused with 503 (counted). The Stop button is never refused.",
    )
    bus_queue: Annotated[StrictInt, Field(ge=10, le=1_000_000)] = Field(
        DEFAULT_BUS_QUEUE,
        description="Mailbox of the dashboard's bus subscriber (its own thread; never blocks a publisher; drops counted).",
    )
    refresh_s: Annotated[StrictFloat, Field(ge=MIN_PERIOD_S, le=60)] = Field(
        DEFAULT_REFRESH_S,
        description="Seconds between polls of what has no events (queue depths, blackboard, supervision); sent only when changed.",
    )

    @model_validator(mode="after")
    def _loopback_unless_allowed(self) -> DashboardConfig:
        if not self.host.strip():
            raise ValueError("dashboard.host is empty: give an address such as 127.0.0.1")
        if not is_loopback(self.host) and not self.allow_remote:
            raise ValueError(
                f"dashboard.host = {self.host}: not a loopback address; the dashboard shows everything the robot "
                "hears and does: set dashboard.allow_remote: true to serve it on the network, or use 127.0.0.1"
            )
        return self


__all__ = ["DashboardConfig", "is_loopback"]
