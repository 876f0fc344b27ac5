"""The systemd user unit shipped in the package (``edgevox/data/edgevox.service``, docs/deploy.md):
systemd accepts it, it restarts on failure and logs to journald under ``edgevox``, and its
commands are the real ``edgevox check`` / ``edgevox run`` on the configured config, the
preflight passing on the default config with a sound server and refusing a broken config."""

from __future__ import annotations

import configparser
import re
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

UNIT = "edgevox.service"


def unit_path() -> Path:
    path = Path(str(resources.files("edgevox") / "data" / UNIT))
    assert path.is_file(), f"{UNIT} is not in the package's data folder"
    return path


def unit() -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # systemd keys are case-sensitive
    parser.read(unit_path(), encoding="utf-8")
    return parser


def defaults() -> dict[str, str]:
    """``Environment=`` of the unit: what the commands get when the environment file is absent."""
    return dict(item.split("=", 1) for item in unit()["Service"]["Environment"].split())


def command(key: str, env: dict[str, str]) -> list[str]:
    """The unit's ``key`` command as systemd expands it: ``${VAR}`` is one word, ``$VAR`` splits."""
    words: list[str] = []
    for word in unit()["Service"][key].split():
        if m := re.fullmatch(r"\$\{(\w+)\}", word):
            words.append(env.get(m.group(1), ""))
        elif m := re.fullmatch(r"\$(\w+)", word):
            words += env.get(m.group(1), "").split()
        else:
            words.append(word)
    assert words[:2] == ["/usr/bin/env", "edgevox"], words
    return words[2:]


def test_systemd_accepts_the_unit(tmp_path):
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is absent (apt-get install systemd)")
    copy = tmp_path / UNIT
    copy.write_text(unit_path().read_text(encoding="utf-8"), encoding="utf-8")
    proc = subprocess.run([analyze, "verify", str(copy)], capture_output=True, text=True, timeout=60)
    # systemd only warns about a bad value (and ignores it), so its warnings count as failures.
    assert proc.returncode == 0 and not proc.stderr.strip(), proc.stderr


def test_it_restarts_on_failure_logs_to_journald_and_starts_with_the_user_session():
    u = unit()
    service = u["Service"]
    assert service["Restart"] == "on-failure" and int(service["RestartSec"]) > 0
    assert (service["StandardOutput"], service["StandardError"]) == ("journal", "journal")
    assert service["SyslogIdentifier"] == "edgevox"
    assert service["EnvironmentFile"] == "-%h/.config/edgevox/edgevox.env"  # optional: "-"
    assert int(u["Unit"]["StartLimitBurst"]) >= 1  # a config that keeps failing is not retried forever
    assert "pipewire-pulse.service" in u["Unit"]["After"] and "pulseaudio.service" in u["Unit"]["After"]
    assert u["Install"]["WantedBy"] == "default.target"  # the user manager's target (lingering: at boot)


def test_the_commands_are_edgevox_check_then_run_on_the_configured_config():
    from edgevox.cli.main import build_parser

    env = {**defaults(), "EDGEVOX_CONFIG": "/home/robot/robot.yaml", "EDGEVOX_RUN_ARGS": "--log-level INFO"}
    check = build_parser().parse_args(command("ExecStartPre", env))
    run = build_parser().parse_args(command("ExecStart", env))
    assert (check.command, check.config) == ("check", "/home/robot/robot.yaml")
    assert (run.command, run.config, run.run_log_level) == ("run", "/home/robot/robot.yaml", "INFO")
    assert defaults()["EDGEVOX_CONFIG"] == "default" and command("ExecStart", defaults()) == ["run", "default"]


@pytest.mark.audio
def test_the_preflight_passes_on_the_default_config_with_a_sound_server_and_refuses_a_broken_one(tmp_path):
    from edgevox.testing.pulse import private_pulseaudio, pulseaudio_installed

    if not pulseaudio_installed():
        pytest.skip("the pulseaudio binary is absent (apt-get install pulseaudio pulseaudio-utils libportaudio2)")
    broken = tmp_path / "robot.yaml"
    broken.write_text("tts:\n  length_scale: -1\n", encoding="utf-8")
    with private_pulseaudio(rate_hz=16000) as pulse:
        results = {}
        for config in ("default", str(broken)):
            argv = command("ExecStartPre", {**defaults(), "EDGEVOX_CONFIG": config})
            results[config] = subprocess.run(
                [sys.executable, "-m", "edgevox", *argv], env=pulse.env(), capture_output=True, text=True, timeout=300
            )
    ok = results["default"]
    assert ok.returncode == 0 and "ready to run" in ok.stdout, ok.stdout + ok.stderr
    assert "device 'default' opened" in ok.stdout
    bad = results[str(broken)]
    assert bad.returncode != 0  # a failed ExecStartPre is a failed start: systemd restarts, then gives up
    assert "tts.length_scale" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1, bad.stderr
