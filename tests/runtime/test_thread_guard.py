"""The suite-wide thread-leak guard really catches a leaked edgevox thread."""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path

# load the suite conftest by path: "tests" is not a package, so it cannot be imported by name
_spec = importlib.util.spec_from_file_location("edgevox_suite_conftest", Path(__file__).parents[1] / "conftest.py")
_conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_conftest)
leaked_threads = _conftest.leaked_threads


def test_guard_reports_a_thread_that_outlives_the_grace_period_and_not_one_that_finishes():
    before = {t for t in threading.enumerate() if t.name.startswith("edgevox")}
    release = threading.Event()
    stuck = threading.Thread(target=release.wait, args=(10,), name="edgevox-leak-probe", daemon=True)
    quick = threading.Thread(target=lambda: None, name="edgevox-quick-probe")
    stuck.start()
    quick.start()
    try:
        assert leaked_threads(before, grace_s=0.05) == ["edgevox-leak-probe"]
    finally:
        release.set()
        stuck.join(5)
    assert leaked_threads(before, grace_s=1.0) == []
