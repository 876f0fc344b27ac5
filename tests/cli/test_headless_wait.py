"""Headless runs (``--say``, ``--input``, piped ``--text``) wait for the skills and background
replies their turns started, up to ``--wait-s``; what still runs then is cancelled by the exit,
named in one line, and the exit status says so (3). A failed skill exits 1.

The end-to-end tests run the real ``edgevox run`` in a child process on the home robot's agent
(``go_to`` is a skill), with the scripted engines the other CLI tests use."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from edgevox.cli.main import main
from edgevox.cli.run_cmd import STILL_RUNNING

from .conftest import write_config
from .test_console import TOOLS_AGENTS, TOOLS_MODULE, TRIGGER

REPO = Path(__file__).resolve().parents[2]

HOME = """\
name: home
llm:
  engine: edgevox.testing:ScriptedLLM
  options: {{default: "Okay."}}
tts:
  engine: edgevox.testing:FakeTTS
  options: {{sample_rate_hz: 16000}}
audio:
  input: {{source: text}}
  output: {{sink: none}}
agent: home_robot
agents:
  home_robot:
    factory: edgevox.examples.home_robot:build_home_robot_agent
    options: {{speed_m_s: {speed}}}
"""


def home_config(folder: Path, speed_m_s: float) -> Path:
    """The home robot (scripted model); ``go_to`` drives at ``speed_m_s`` (10: ~0.5 s to the kitchen)."""
    path = folder / "home.yaml"
    path.write_text(HOME.format(speed=speed_m_s), encoding="utf-8")
    return path


def edgevox(*args: str, cwd: Path, stdin: str | None = None, pythonpath: Path | None = None):
    paths = [str(REPO)] + ([str(pythonpath)] if pythonpath else []) + [os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    return subprocess.run(
        [sys.executable, "-m", "edgevox", "run", *args],
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
    )


def events(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines()]


def skill_states(evs: list[dict], skill: str) -> list[str]:
    return [e["state"] for e in evs if e["kind"] == "agent.skill_state" and e["skill"] == skill and not e["feedback"]]


def test_say_waits_for_the_skill_it_started_then_exits_0(tmp_path):
    proc = edgevox(str(home_config(tmp_path, 10)), "--say", "go to the kitchen", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    evs = events(proc.stdout)
    kinds = [e["kind"] for e in evs]
    # The reply came first ("Okay, go to kitchen."), the drive ended after it, and only then the run.
    assert skill_states(evs, "go_to") == ["running", "succeeded"], proc.stdout
    assert kinds.index("voice.turn_done") < max(i for i, e in enumerate(evs) if e.get("state") == "succeeded")
    assert "still running" not in proc.stderr and "Traceback" not in proc.stderr


def test_a_skill_still_running_after_wait_s_is_cancelled_named_in_one_line_and_exits_3(tmp_path):
    config = home_config(tmp_path, 0.01)  # ~10 minutes to the kitchen
    proc = edgevox(str(config), "--say", "go to the kitchen", "--json", "--wait-s", "0.5", cwd=tmp_path)
    assert proc.returncode == STILL_RUNNING == 3, proc.stderr
    assert proc.stderr.splitlines() == ["edgevox: skill go_to still running after 0.5 s: cancelled; raise --wait-s"]
    evs = events(proc.stdout)
    assert skill_states(evs, "go_to") == ["running", "cancelled"]
    assert [e["error"] for e in evs if e["kind"] == "agent.skill_state" and e["state"] == "cancelled"] == ["shutdown"]


def test_piped_text_waits_for_skills_and_the_background_replies_they_trigger(tmp_path):
    """A patrol of ~0.4 s, then a background agent's reply to its end: both before the exit."""
    (tmp_path / "console_tools.py").write_text(TOOLS_MODULE + TRIGGER, encoding="utf-8")
    config = write_config(tmp_path, extra=TOOLS_AGENTS, name="tools.yaml")
    proc = edgevox(str(config), "--text", "--json", cwd=tmp_path, stdin="patrol 20 laps\n", pythonpath=tmp_path)
    assert proc.returncode == 0, proc.stderr
    evs = events(proc.stdout)
    assert skill_states(evs, "patrol") == ["running", "succeeded"]
    replies = [e["text"] for e in evs if e["kind"] == "agent.reply" and e["agent"] == "watcher"]
    assert replies == ["Noted: The skill patrol succeeded."], proc.stdout


FAILING = '''\
from edgevox.agents.skills import GoalHandle, skill


@skill(timeout_s=10.0)
def patrol(laps: int, goal: GoalHandle) -> str:
    """Patrol the house.

    Args:
        laps: how many laps.
    """
    goal.sleep(0.05)
    raise RuntimeError("the left wheel is stuck")
'''


def test_a_skill_that_fails_after_the_reply_is_one_line_and_exit_status_1(tmp_path, capsys, monkeypatch):
    (tmp_path / "failing_tools.py").write_text(FAILING, encoding="utf-8")
    config = write_config(tmp_path, extra="    tools: [failing_tools:patrol]\n", name="failing.yaml")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["run", str(config), "--say", "patrol 2 laps"]) == 1
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert err == ["edgevox: skill patrol failed: RuntimeError: the left wheel is stuck"]


@pytest.mark.parametrize("value", ["-1", "nan", "soon"])
def test_a_bad_wait_s_is_one_usage_line(scripted_config, capsys, value):
    with pytest.raises(SystemExit) as exc:
        main(["run", str(scripted_config), "--say", "hi", f"--wait-s={value}"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "argument --wait-s:" in err.splitlines()[-1] and "Traceback" not in err


def test_help_documents_wait_s_and_the_exit_statuses(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--wait-s S" in text and "(default 60)" in text
    assert "3 when a headless run (--say, --input, piped --text) exited with a skill" in text
