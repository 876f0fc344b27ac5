"""Suite-wide fixtures.

``no_leaked_threads`` (autouse): a test fails if it leaves behind a thread whose
name starts with ``edgevox`` (daemon or not) that was not running when it began.
Threads get a grace period to finish - by ``join`` with a deadline, never by
sleeping - because a stopped worker may still be returning from its last call.
Session-scoped fixtures must not own edgevox threads (they would look leaked).
"""

from __future__ import annotations

import importlib.util
import threading
import time

import pytest
from hypothesis import HealthCheck, settings

# Property tests: the same examples on every run (a CI failure reproduces locally), no
# per-example deadline (a busy 2-core machine is slow, not wrong), no example database.
settings.register_profile(
    "edgevox",
    derandomize=True,
    deadline=None,
    database=None,
    max_examples=300,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("edgevox")

THREAD_PREFIX = "edgevox"
GRACE_S = 2.0


def _edgevox_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith(THREAD_PREFIX) and t.is_alive()}


def leaked_threads(before: set[threading.Thread], grace_s: float = GRACE_S) -> list[str]:
    """Names of edgevox threads not in ``before`` still alive after joining them for ``grace_s``."""
    deadline = time.monotonic() + grace_s
    for thread in _edgevox_threads() - before:
        if thread is not threading.current_thread():
            thread.join(max(0.0, deadline - time.monotonic()))
    return sorted(t.name for t in _edgevox_threads() - before)


@pytest.fixture(scope="session")
def real_llm():
    """The embedded SmolLM2-135M through the real llama.cpp adapter, shared by the suite.
    Fails (never skips) if we ship it broken; skips only where llama-cpp-python is absent."""
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed here (pip install 'edgevox[llm]')")
    from edgevox.engines.llm_llama_cpp import LlamaCppLLM

    llm = LlamaCppLLM()
    yield llm
    llm.close()


@pytest.fixture(autouse=True)
def no_leaked_threads():
    before = _edgevox_threads()
    yield
    leaked = leaked_threads(before)
    if leaked:
        pytest.fail(f"test leaked threads: {leaked} (stop/close what the test started)", pytrace=False)


# --- CI runs everything -------------------------------------------------------------------
# Tests skip when something the machine lacks (ROS, PulseAudio, the shared speech) is absent,
# so a developer can run the suite anywhere. CI installs all of it (scripts/setup.sh --dev), so
# scripts/test.sh sets EDGEVOX_NO_SKIPS=1 and any skip there fails the run: a skip in CI means a
# setup step broke, and a broken thing must fail, not hide.
_skipped: list[str] = []


def pytest_runtest_logreport(report):
    if report.skipped and not hasattr(report, "wasxfail"):
        _skipped.append(report.nodeid)


def pytest_collectreport(report):
    if report.skipped:
        _skipped.append(report.nodeid)


def pytest_sessionfinish(session, exitstatus):
    import os

    if os.environ.get("EDGEVOX_NO_SKIPS") == "1" and _skipped and exitstatus == 0:
        session.exitstatus = 1


def pytest_terminal_summary(terminalreporter):
    import os

    if os.environ.get("EDGEVOX_NO_SKIPS") == "1" and _skipped:
        terminalreporter.write_line(
            f"EDGEVOX_NO_SKIPS=1 and {len(_skipped)} test(s) skipped: {_skipped[:5]} - "
            "CI must run everything; fix the setup step that left this out",
            red=True,
        )
