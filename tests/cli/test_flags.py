"""The options people expect: ``--version``, ``--list-devices``, ``--input-device`` /
``--output-device`` (on a real PulseAudio null sink), ``--set key.path=value``, ``--text``
speaking when there is a speaker, and Ctrl-C: exit status 130 and no traceback at every phase
before the application runs (command imports, a config's module imports, model loading)."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import textwrap
from importlib.metadata import version
from pathlib import Path

import pytest

from edgevox.cli.main import main

from .conftest import write_config

REPO = Path(__file__).resolve().parents[2]


def edgevox_command() -> list[str]:
    """The installed ``edgevox`` console script (what a user types), next to this Python."""
    script = Path(sys.executable).with_name("edgevox")
    assert script.is_file(), f"the edgevox console script is not installed next to {sys.executable}"
    return [str(script)]


def run_edgevox(*args: str, env: dict[str, str] | None = None, cwd: Path = REPO, stdin: str = "", timeout: float = 120):
    return subprocess.run(
        [*edgevox_command(), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        cwd=cwd,
        timeout=timeout,
    )


def error_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err.strip()


# --- --version ----------------------------------------------------------------------------------


def test_version_prints_the_installed_version_and_exits_0():
    proc = run_edgevox("--version")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"edgevox {version('edgevox')}\n"


def test_short_version_option_is_the_same(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["-V"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out == f"edgevox {version('edgevox')}\n"


# --- --set --------------------------------------------------------------------------------------


def test_set_changes_a_key_and_the_last_one_wins_over_earlier_ones_and_the_file(scripted_config, capsys):
    code = main(
        [
            "run",
            str(scripted_config),
            "--say",
            "hi",
            "--set",
            "llm.options.default=First override.",
            "--set",
            "llm.options={default: Second override.}",  # a YAML flow mapping
        ]
    )
    assert code == 0
    assert "scripted: Second override." in capsys.readouterr().out


def test_set_values_are_yaml_scalars_and_lists(scripted_config, capsys):
    code = main(
        [
            *("check", str(scripted_config)),
            *("--set", "llm.temperature=0.3", "--set", "stt.vocabulary=[Rex, garage]"),
            *("--set", "audio.output.sink=none", "--set", "name=rex"),
        ]
    )
    assert code == 0
    assert "config is valid (rex)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (
            "llm.temperatur=0.3",
            "edgevox: error: --set llm.temperatur=0.3: unknown key 'llm.temperatur'; did you mean 'llm.temperature'?",
        ),
        (
            "llm.temperature=hot",
            "edgevox: error: --set llm.temperature=hot: llm.temperature = hot: expected a number, got a string",
        ),
        (
            "llm.temperature",
            "edgevox: error: --set llm.temperature: expected KEY=VALUE, e.g. --set llm.temperature=0.3",
        ),
        ("llm..x=1", "edgevox: error: --set llm..x=1: 'llm..x' is not a key path;"),
        ("llm.temperature=[", "edgevox: error: --set llm.temperature=[: the value is not valid YAML"),
        ("agent=nosuch", "edgevox: error: --set agent=nosuch: agent: no agent or workflow named 'nosuch'"),
        (
            "agents.assistant.tools=[time]",
            "edgevox: error: --set agents.assistant.tools=[time]: agents.assistant.tools.0 = time: expected a "
            "'package.module:attribute' reference",
        ),
    ],
)
def test_a_bad_set_is_one_line_naming_the_option_and_the_key(scripted_config, capsys, option, message):
    for command in (["run", str(scripted_config), "--say", "hi"], ["check", str(scripted_config)]):
        assert main([*command, "--set", option]) == 2
        assert error_line(capsys).startswith(message)


def test_an_error_in_the_file_still_names_the_file_and_line_when_set_is_used(tmp_path, capsys):
    config = write_config(tmp_path, extra="    max_tokenz: 3\n")
    assert main(["check", str(config), "--set", "llm.temperature=0.3"]) == 2
    assert error_line(capsys) == (
        f"edgevox: error: {config}:14: unknown key 'agents.assistant.max_tokenz'; "
        "did you mean 'agents.assistant.max_tokens'?"
    )


def test_set_that_contradicts_an_option_of_the_command_is_an_error(scripted_config, capsys):
    assert main(["run", str(scripted_config), "--say", "hi", "--set", "audio.input.source=device"]) == 2
    assert error_line(capsys) == (
        "edgevox: error: --set audio.input.source=device: the command's own options set audio.input.source "
        "to 'text'; drop one of the two"
    )
    # Agreeing with the option is fine.
    assert main(["run", str(scripted_config), "--say", "hi", "--set", "audio.input.source=text"]) == 0


# --- devices ------------------------------------------------------------------------------------


def test_list_devices_without_a_device_explains_what_to_do_and_needs_no_config(monkeypatch, capsys):
    import edgevox.check

    monkeypatch.setattr(edgevox.check, "list_audio_devices", lambda: [])
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "--list-devices"])
    assert exit_info.value.code == 1
    assert "no usable audio device" in capsys.readouterr().out


@pytest.fixture
def pulse_env():
    """A private PulseAudio with a null sink: the environment a subprocess needs to see it."""
    from edgevox.testing.pulse import private_pulseaudio, pulseaudio_installed

    if not pulseaudio_installed():
        pytest.skip("the pulseaudio binary is absent (apt-get install pulseaudio pulseaudio-utils libportaudio2)")
    with private_pulseaudio(rate_hz=16000) as pulse:
        yield pulse.env()


@pytest.mark.audio
def test_list_devices_on_run_and_console_prints_what_devices_prints(pulse_env, scripted_config):
    listed = run_edgevox("run", str(scripted_config), "--list-devices", env=pulse_env)
    devices = run_edgevox("devices", env=pulse_env)
    assert listed.returncode == 0 and devices.returncode == 0, listed.stderr + devices.stderr
    assert " pulse" in listed.stdout and "--input-device/--output-device" in listed.stdout
    assert listed.stdout == devices.stdout
    for command in (["run", "--list-devices"], ["console", "--list-devices"]):  # no CONFIG needed
        proc = run_edgevox(*command, env=pulse_env)
        assert proc.returncode == 0 and proc.stdout == devices.stdout, proc.stderr


@pytest.mark.audio
def test_device_options_choose_the_devices_by_name_or_index(pulse_env, tmp_path):
    config = write_config(tmp_path, sink="device")
    config.write_text(config.read_text().replace("source: text", "source: device"), encoding="utf-8")
    listing = run_edgevox("devices", env=pulse_env).stdout
    pulse_index = next(line.split()[0] for line in listing.splitlines() if line.endswith(" pulse"))
    proc = run_edgevox("check", str(config), "--input-device", "PULSE", "--output-device", pulse_index, env=pulse_env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("device 'pulse' opened") == 2, proc.stdout  # not 'default'


@pytest.mark.audio
def test_a_device_option_that_matches_nothing_lists_the_devices_present(pulse_env, tmp_path):
    config = write_config(tmp_path, sink="device")
    proc = run_edgevox("run", str(config), "--say", "hi", "--output-device", "usb speaker", env=pulse_env)
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "edgevox: error: --output-device usb speaker: no audio output device matches 'usb speaker'; output devices: "
    ), proc.stderr
    assert "'pulse'" in lines[0] and "'default'" in lines[0]


def test_an_input_device_option_when_the_input_is_typed_is_an_error(scripted_config, capsys):
    assert main(["run", str(scripted_config), "--text", "--input-device", "1"]) == 2
    assert error_line(capsys).startswith("edgevox: error: --input-device 1: the input is not a device here")


# --- --text speaks when there is a speaker ------------------------------------------------------


@pytest.mark.audio
def test_text_mode_speaks_the_replies_on_the_speaker(pulse_env, tmp_path):
    config = write_config(tmp_path, sink="device")
    proc = run_edgevox("run", str(config), "--text", "--json", env=pulse_env, stdin="hello\n")
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    assert any(e["kind"] == "voice.audio_out" for e in events), "no audio reached the speaker"
    done = [e for e in events if e["kind"] == "voice.turn_done"]
    assert done and done[0]["spoken_text"].startswith("Hello from the robot."), done


def test_text_mode_without_a_speaker_prints_the_replies_and_says_so(tmp_path, monkeypatch, capsys):
    import edgevox.check

    monkeypatch.setattr(edgevox.check, "list_audio_devices", lambda: [])
    config = write_config(tmp_path, sink="device")
    assert main(["run", str(config), "--say", "hi"]) == 0
    captured = capsys.readouterr()
    assert "scripted: Hello from the robot. How can I help?" in captured.out
    assert captured.err == (
        "edgevox: no audio output device here, so replies are printed, not spoken "
        "(--output reply.wav writes them to a file)\n"
    )


# --- Ctrl-C -------------------------------------------------------------------------------------

HANDSHAKE = """\
import os


def wait_for_the_test():
    # Tell the test this phase has begun, then block until it sends Ctrl-C.
    os.write(int(os.environ["EV_READY_FD"]), b"ready\\n")
    os.read(int(os.environ["EV_GO_FD"]), 1)
"""


def _as_started_from_a_terminal() -> None:
    """The child's Ctrl-C as a terminal's foreground command has it. A shell without job control
    starts ``cmd &`` with SIGINT ignored, and Python then installs no KeyboardInterrupt handler:
    a test run started that way (``bash .ci/run &``) would hand the ignore down to the child."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def interrupt_when_ready(args: list[str], *, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run ``edgevox args``; when the child reports it reached the phase, send SIGINT."""
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    proc = subprocess.Popen(
        [*edgevox_command(), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **env, "EV_READY_FD": str(ready_w), "EV_GO_FD": str(go_r)},
        cwd=cwd,
        pass_fds=(ready_w, go_r),
        preexec_fn=_as_started_from_a_terminal,
    )
    os.close(ready_w)
    os.close(go_r)
    try:
        readable, _, _ = select.select([ready_r], [], [], 60)
        assert readable and os.read(ready_r, 16) == b"ready\n", f"the child never reached the phase: {proc.poll()}"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        os.close(ready_r)
        os.close(go_w)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.mark.parametrize("module", ["edgevox.errors", "edgevox.cli.run_cmd", "rich.progress"])
def test_ctrl_c_while_the_command_modules_import_exits_130_without_a_traceback(tmp_path, scripted_config, module):
    # A sitecustomize on PYTHONPATH blocks the import of `module` (no hook in edgevox itself).
    (tmp_path / "ev_handshake.py").write_text(HANDSHAKE, encoding="utf-8")
    (tmp_path / "sitecustomize.py").write_text(
        textwrap.dedent(
            f"""\
            import sys


            class BlockImport:
                def find_spec(self, name, path=None, target=None):
                    if name == {module!r}:
                        sys.meta_path.remove(self)
                        import ev_handshake

                        ev_handshake.wait_for_the_test()
                    return None


            sys.meta_path.insert(0, BlockImport())
            """
        ),
        encoding="utf-8",
    )
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))}
    proc = interrupt_when_ready(["run", str(scripted_config), "--say", "hi"], env=env, cwd=tmp_path)
    assert proc.returncode == 130, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") <= 1, proc.stderr


@pytest.mark.parametrize(
    "phase",
    [
        "tool_import",  # a config's own module imported while the application is built
        "model_load",  # a custom LLM engine's loader (the LLM is the first model to load)
    ],
)
def test_ctrl_c_while_the_application_loads_exits_130_without_a_traceback(tmp_path, phase):
    (tmp_path / "ev_handshake.py").write_text(HANDSHAKE, encoding="utf-8")
    (tmp_path / "slow_tools.py").write_text(
        "from ev_handshake import wait_for_the_test\n\n"
        + ("wait_for_the_test()\n\n" if phase == "tool_import" else "")
        + "def move() -> str:\n    return 'moving'\n",
        encoding="utf-8",
    )
    (tmp_path / "slow_llm.py").write_text(
        "from ev_handshake import wait_for_the_test\n"
        "from edgevox.testing import ScriptedLLM\n\n\n"
        "def load(**options):\n"
        + ("    wait_for_the_test()\n" if phase == "model_load" else "")
        + "    return ScriptedLLM(**options)\n",
        encoding="utf-8",
    )
    config = write_config(tmp_path, extra="    tools: [slow_tools:move]\n")
    config.write_text(config.read_text().replace("edgevox.testing:ScriptedLLM", "slow_llm:load"), encoding="utf-8")
    proc = interrupt_when_ready(["run", config.name, "--say", "hi"], env={}, cwd=tmp_path)
    assert proc.returncode == 130, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") <= 1, proc.stderr
