"""The dashboard in a real browser: Debian's chromium, headless, driven through chromium-driver
by selenium, against a real App (the builtin home robot on scripted engines).

The page loads and goes live, a typed turn appears with its latency bars, the robot's running
skill appears and the page's Stop button cancels it (checked on the bus and on the page). Every
run saves screenshots (``$EDGEVOX_TEST_ARTIFACTS/dashboard``, else the test's tmp folder); a
failing run names that folder in its report. Waits are WebDriverWait on DOM conditions.

Without chromium, chromium-driver or selenium the test skips, which CI's EDGEVOX_NO_SKIPS=1
turns into a failure: ``scripts/setup.sh --dev`` installs them.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from edgevox.voice.events import Stopped

from .conftest import home_robot

pytestmark = pytest.mark.slow

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WAIT_S = 10.0


class Browser:
    """A headless chromium and the folder its screenshots go to."""

    def __init__(self, driver, folder: Path) -> None:  # noqa: ANN001 - selenium's WebDriver, imported lazily
        from selenium.webdriver.support.ui import WebDriverWait

        self.driver = driver
        self.folder = folder
        self.shots: list[Path] = []
        self.wait = WebDriverWait(driver, WAIT_S)

    def shot(self, name: str) -> Path:
        path = self.folder / f"{len(self.shots) + 1:02d}-{name}.png"
        self.driver.save_screenshot(str(path))
        self.shots.append(path)
        return path

    def read(self, selector: str, attribute: str = "") -> list[str]:
        """The text (or ``attribute``) of every element matching ``selector``, read in the page in
        one call: the page redraws its panels as messages arrive, so element handles go stale."""
        script = "return Array.from(document.querySelectorAll(arguments[0]), e => arguments[1] ? e.getAttribute(arguments[1]) : e.textContent)"
        return self.driver.execute_script(script, selector, attribute)

    def element(self, selector: str):  # noqa: ANN201 - selenium's WebElement (a static one: the Stop button, a filter)
        from selenium.webdriver.common.by import By

        return self.driver.find_element(By.CSS_SELECTOR, selector)

    def until(self, what: str, condition) -> object:  # noqa: ANN001 - a function of the driver
        """Wait (WebDriverWait) until ``condition(driver)`` is truthy; ``what`` names it on timeout."""
        from selenium.common.exceptions import TimeoutException

        try:
            return self.wait.until(condition)
        except TimeoutException:
            self.shot("timeout")
            raise AssertionError(
                f"the page never showed {what} within {WAIT_S} s (screenshots: {self.folder})"
            ) from None

    def severe_console_errors(self) -> list[str]:
        return [e["message"] for e in self.driver.get_log("browser") if e["level"] == "SEVERE"]


@pytest.fixture
def browser(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Browser]:
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not os.access(p, os.X_OK)]
    if missing:
        pytest.skip(
            f"{' and '.join(missing)} missing: apt-get install chromium chromium-driver (scripts/setup.sh --dev)"
        )
    pytest.importorskip("selenium", reason="selenium is a dev dependency: pip install -e '.[dev]'")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    base = os.environ.get("EDGEVOX_TEST_ARTIFACTS")
    folder = (Path(base) if base else tmp_path) / "dashboard" / request.node.name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1000"):
        options.add_argument(arg)
    options.add_argument(f"--user-data-dir={tmp_path / 'chromium-profile'}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(WAIT_S)
    page = Browser(driver, folder)
    request.node.stash[SCREENSHOTS] = folder
    try:
        yield page
    finally:
        try:
            page.shot("end")
        finally:
            driver.quit()


SCREENSHOTS = pytest.StashKey[Path]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # noqa: ANN201 - pytest's hook
    outcome = yield
    report = outcome.get_result()
    folder = item.stash.get(SCREENSHOTS, None)
    if report.failed and folder is not None:
        report.sections.append(("dashboard screenshots", str(folder)))


def test_the_page_shows_a_turn_with_latency_bars_and_its_stop_button_cancels_a_running_skill(running, browser):
    app = home_robot(**{"dashboard.enabled": True, "dashboard.port": 0})
    events = running(app)
    driver = browser.driver

    driver.get(app.dashboard.url)
    browser.until("the stream going live", lambda d: browser.read("#connection") == ["live"])
    browser.until("the supervision tree", lambda d: browser.read('#tree li[data-node="App home-robot"]'))
    browser.shot("loaded")

    turn_id = app.submit_text("go to the kitchen")
    turn = f'.turn[data-turn-id="{turn_id}"]'
    browser.until("the typed turn", lambda d: browser.read(f"{turn} .bubble.user") == ["go to the kitchen"])
    browser.until("the robot's reply", lambda d: "kitchen" in "".join(browser.read(f"{turn} .bubble.robot")))
    stages = browser.until(
        "the turn's latency bars", lambda d: browser.read(f"{turn} svg.waterfall rect.seg", "data-stage")
    )
    assert set(stages) >= {"transcript->first_token", "first_token->first_chunk"}
    browser.until("the latency plot", lambda d: browser.read("#plot circle.point"))
    browser.until(
        "the running skill", lambda d: browser.read('tr.skill[data-skill="go_to"]', "data-state") == ["running"]
    )
    browser.shot("turn-and-skill")
    (goal,) = app.runtime.activities.running("skill")

    browser.element("#stop-button").click()
    browser.until(
        "the skill cancelled", lambda d: browser.read('tr.skill[data-skill="go_to"]', "data-state") == ["cancelled"]
    )
    browser.until("the stop's answer", lambda d: "skill go_to" in "".join(browser.read("#stop-result")))
    browser.shot("stopped")
    assert goal.wait(1.0) and app.runtime.activities.running("skill") == []
    assert app.dashboard.control.served == 1  # the page's STOP went to its own port (preflight and all)
    stops = [e for e in events if isinstance(e, Stopped)]
    assert [s.reason for s in stops] == ["stop button on the dashboard"] and "skill go_to" in stops[0].cancelled

    browser.element("#event-kind").send_keys("agent.skill")
    browser.until(
        "the events filtered by kind",
        lambda d: (
            (kinds := browser.read("#events .ev", "data-kind")) and all(k.startswith("agent.skill") for k in kinds)
        ),
    )
    assert browser.severe_console_errors() == []
