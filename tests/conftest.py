"""Suite-wide fixtures.

``no_leaked_threads`` (autouse): a test fails if it leaves behind a thread whose
name starts with ``edgevox`` (daemon or not) that was not running when it began.
Threads get a grace period to finish - by ``join`` with a deadline, never by
sleeping - because a stopped worker may still be returning from its last call.
Session-scoped fixtures must not own edgevox threads (they would look leaked).
"""

from __future__ import annotations

import threading
import time

import pytest

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


@pytest.fixture(autouse=True)
def no_leaked_threads():
    before = _edgevox_threads()
    yield
    leaked = leaked_threads(before)
    if leaked:
        pytest.fail(f"test leaked threads: {leaked} (stop/close what the test started)", pytrace=False)
