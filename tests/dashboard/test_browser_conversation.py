"""The conversation panel in a real browser (Debian's chromium through selenium, as
``test_browser.py``): a turn typed in the page's text box goes through ``App.submit_text``
and shows its tool calls, background agents' replies appear in the conversation, and times
read as clock times and ages, never as raw floats. Typing "stop" there is the safety stop."""

from __future__ import annotations

import re

import pytest

from edgevox.testing import ScriptedLLM
from edgevox.voice.events import Stopped, TranscriptEvent

from .conftest import home_robot, text_app
from .test_browser import browser  # noqa: F401 - the fixture
from .test_state import BATTERY_WATCH, DashBattery

pytestmark = pytest.mark.slow

CLOCK = re.compile(r"^\d\d:\d\d:\d\d \(\d+\.\d s ago\)$")
RAW_FLOAT = re.compile(r"\d\.\d{5,}|e-0\d")


def say_in_the_page(page, text: str) -> None:  # noqa: ANN001 - the Browser of test_browser.py
    box = page.element("#say-text")
    box.send_keys(text)
    page.element("#say-button").click()


def test_a_turn_typed_in_the_page_shows_its_tool_call_and_readable_times(running, browser):  # noqa: F811
    app = home_robot(**{"dashboard.enabled": True, "dashboard.port": 0})
    events = running(app)
    browser.driver.get(app.dashboard.url)
    browser.until("the stream going live", lambda d: browser.read("#connection") == ["live"])

    say_in_the_page(browser, "go to the kitchen")
    turn = '.turn[data-kind="turn"]'
    browser.until("the typed turn", lambda d: browser.read(f"{turn} .bubble.user") == ["go to the kitchen"])
    browser.until("the tool call finished", lambda d: browser.read(f"{turn} .tool", "data-state") == ["ok"])
    (call,) = browser.read(f"{turn} .tool")
    assert call.startswith('⚙ go_to(room="kitchen") → ') and re.search(r" · [\d.]+ (ms|µs|s)$", call), call
    browser.until("the reply", lambda d: "kitchen" in "".join(browser.read(f"{turn} .bubble.robot")))
    assert (
        browser.read("#say-result")[0].startswith("sent as turn #")
        and browser.driver.execute_script("return document.getElementById('say-text').value") == ""
    )
    (typed,) = [e for e in events if isinstance(e, TranscriptEvent)]
    assert typed.text == "go to the kitchen" and typed.origin == "text"  # the typed-turn path, as App.submit_text

    (when,) = browser.read(f"{turn} .meta .when")
    assert CLOCK.match(when), when
    browser.until("the skill's start time", lambda d: browser.read('tr.skill[data-skill="go_to"] .when'))
    shown = " ".join(browser.read("#events .ev") + browser.read("#conversation") + browser.read("#skills"))
    assert not RAW_FLOAT.search(shown), RAW_FLOAT.search(shown)
    browser.until("the age counting up", lambda d: browser.read(f"{turn} .ago")[0] != when.split("(")[1][:-1])

    app.blackboard.set("robot.pose", {"x_m": 1.23456789, "heading_deg": 90})
    browser.until(
        "the pose rounded",
        lambda d: browser.read('#blackboard tr[data-key="robot.pose"] td')[1:] == ['{"x_m":1.235,"heading_deg":90}'],
    )

    browser.element("#say-text").clear()
    browser.element("#say-button").click()  # empty: one line says what to do, nothing is sent
    assert browser.read("#say-result") == ["type something to say to the robot"]

    say_in_the_page(browser, "stop")  # the text box is the typed path: a stop phrase stops at once
    browser.until("the stop line", lambda d: "skill go_to" in "".join(browser.read("#conversation .stopline")))
    assert [s.reason for s in events if isinstance(s, Stopped)] and app.runtime.activities.running("skill") == []
    browser.shot("typed")
    assert browser.severe_console_errors() == []


def test_a_background_agents_reply_appears_in_the_conversation(running, browser):  # noqa: F811
    app = text_app(BATTERY_WATCH + "dashboard: {enabled: true, port: 0}\n", llm=ScriptedLLM(default="Battery low."))
    running(app)
    browser.driver.get(app.dashboard.url)
    browser.until("the stream going live", lambda d: browser.read("#connection") == ["live"])

    app.bus.publish(DashBattery(level=12))
    bg = '.turn[data-kind="background"]'
    browser.until(
        "the background reply", lambda d: browser.read(f"{bg} .bubble.background") == ["⟲ battery-watchBattery low."]
    )
    browser.until("the run completed", lambda d: "completed" in "".join(browser.read(f"{bg} .meta")))
    (meta,) = browser.read(f"{bg} .meta")
    assert "background agent battery-watch" in meta and CLOCK.match(meta.split(" · ")[0]), meta
    browser.shot("background")
    assert browser.severe_console_errors() == []
