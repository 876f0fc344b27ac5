"""Resident size measured in a fresh interpreter, for the engines' memory tests: what other
tests loaded or freed does not move it."""

from __future__ import annotations

import subprocess
import sys

RSS_MB = """
def rss_mb():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:")) / 1024
"""
"""Defines ``rss_mb()`` in a script; a script prints its two figures last (``print(a, b)``)."""


def two_rss_figures(script: str, timeout_s: float) -> tuple[float, float]:
    """Run ``RSS_MB + script`` in a fresh interpreter; the two figures it printed last."""
    done = subprocess.run(
        [sys.executable, "-c", RSS_MB + script], capture_output=True, text=True, timeout=timeout_s, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    first, second = (float(x) for x in done.stdout.split()[-2:])
    return first, second
