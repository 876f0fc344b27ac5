"""``edgevox bench fleet`` runs end to end on real processes and prints the fault table: no stop
silently lost, every lost data sample counted, the dead-man and the unreachable robot (issue 26)."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.zenoh


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "edgevox", "bench", "fleet", *args], capture_output=True, text=True, timeout=300
    )


def test_a_small_fleet_bench_prints_every_figure_and_loses_no_stop():
    done = _run("--robots", "2", "--trials", "3", "--stops", "10", "--blob-mb", "1", "--pause-s", "1")
    out = done.stdout
    assert done.returncode == 0, done.stderr[-2000:]
    assert "(3 of 3 stops acknowledged by all)" in out, out
    assert "10 stops: " in out and "0 silently lost; skill ended after resume: True" in out, out
    assert "(uncounted: 0)" in out, out
    assert "the other robots: 10 of 10 stops acknowledged in time" in out, out  # a frozen robot delays no one
    assert "reached the robot" in out  # the baseline with Zenoh's defaults, same run
    assert "killed operator: dead-man cancelled the robot's skill" in out and "NOT within" not in out, out
    assert "killed robot: a stop reports r1 unreachable" in out, out
    assert "its running goal marked lost" in out, out
    # Real rclpy: each cancel of a running goal is answered through 500 junk cancels (it is installed here).
    assert "ROS 2 junk-cancel flood: 5 of 5 cancels of a running goal answered 'cancelled'" in out, out
    assert "inventory: r1 (edgevox/fleet/r1): present" in out and "r2 (edgevox/fleet/r2): present" in out, out


def test_bad_robot_counts_get_one_line_saying_what_to_give():
    done = _run("--robots", "0,x")
    assert done.returncode == 2
    assert done.stdout.strip() == ("edgevox bench fleet: --robots '0,x': give robot counts from 1 to 32, e.g. 1,2,4,8")
