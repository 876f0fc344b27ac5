"""Apps with the dashboard, on scripted engines, and a test's view of a page's stream."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from edgevox.app import App, Engines
from edgevox.config import load_config
from edgevox.config.loader import parse_config
from edgevox.dashboard.feed import ClientFeed, parse_frame
from edgevox.dashboard.state import DashboardState
from edgevox.runtime.events import Event
from edgevox.testing import ScriptedLLM

TEXT_APP = """\
name: dash-test
audio:
  input: {source: text}
  output: {sink: none}
"""


def text_app(yaml: str = "", llm: ScriptedLLM | None = None) -> App:
    """An App answering typed turns with a scripted model (``yaml`` adds keys to the config)."""
    return App.build(parse_config(TEXT_APP + yaml, env={}), engines=Engines(llm=llm or ScriptedLLM(default="Hello.")))


def home_robot(**overrides: Any) -> App:
    """The builtin home robot (typed input, no audio out, scripted model), its drive slowed to
    last ~30 s so a skill is still running when the test stops it."""
    config = load_config(
        "home_robot", overrides={"audio.input.source": "text", "audio.output.sink": "none", **overrides}, env={}
    )
    app = App.build(config, engines=Engines(llm=ScriptedLLM(default="Happy to help.")))
    app.agents["home_robot"].deps["robot"].speed_m_s = 0.2
    return app


@pytest.fixture
def running() -> Iterator[Callable[[App], list[Event]]]:
    """``running(app)`` starts ``app``, records its events, and stops it (cleanly) at the end."""
    apps: list[App] = []

    def start(app: App) -> list[Event]:
        events: list[Event] = []
        app.add_observer(events.append)
        app.start()
        apps.append(app)
        return events

    yield start
    for app in apps:
        report = app.stop(3.0)
        assert report, report


class Page:
    """What one open page receives (a real :class:`~edgevox.dashboard.feed.ClientFeed` of the
    state), read by a test as the server reads it for a page: :meth:`wait_for` waits on the
    feed's wake-up, never by sleeping, and reconnects (a fresh snapshot) when it was shed,
    as a browser's EventSource does."""

    def __init__(self, state: DashboardState) -> None:
        self.state = state
        self.woken = threading.Event()
        self.feed = self._connect()
        self.messages: list[dict[str, Any]] = []
        self.shed: list[ClientFeed] = []
        """Feeds of this page the state cut off (it then reconnected)."""

    def _connect(self) -> ClientFeed:
        feed = self.state.connect(self.woken.set)
        assert feed is not None, f"{self.state.max_pages} pages open already"
        return feed

    def wait_for(self, predicate: Callable[[dict[str, Any]], bool], timeout_s: float = 5.0) -> dict[str, Any]:
        """The first message (received so far or later) for which ``predicate`` holds."""
        deadline = time.monotonic() + timeout_s
        seen = 0
        while True:
            self.messages += [parse_frame(item) for item in self.feed.take()]
            if self.feed.shed:  # what the browser does when the server cut it off
                self.shed.append(self.feed)
                self.feed = self._connect()
                continue
            for message in self.messages[seen:]:
                if predicate(message):
                    return message
            seen = len(self.messages)
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no such message within {timeout_s} s; got {[m['type'] for m in self.messages]}")
            self.woken.wait(left)
            self.woken.clear()


def turn_done(turn_id: int) -> Callable[[dict[str, Any]], bool]:
    return lambda m: m["type"] == "turn" and m["turn"]["turn_id"] == turn_id and m["turn"]["status"] != ""


def skill_in(state: str) -> Callable[[dict[str, Any]], bool]:
    return lambda m: m["type"] == "skill" and m["skill"]["state"] == state
