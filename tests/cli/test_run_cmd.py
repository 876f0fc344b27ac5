"""``edgevox run``: one-shot turns, JSON events, WAV output, and Ctrl-C shutdown."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import wave
from pathlib import Path

import pytest

from edgevox.cli.main import main

from .conftest import write_config

REPO = Path(__file__).resolve().parents[2]


def run_cli(*argv: str) -> int:
    return main(list(argv))


def test_say_runs_one_turn_prints_the_reply_and_exits(scripted_config, capsys):
    assert run_cli("run", str(scripted_config), "--say", "hi there") == 0
    out = capsys.readouterr().out
    assert "you: hi there" in out
    assert "scripted: Hello from the robot. How can I help?" in out


def test_json_writes_every_event_as_one_json_line(scripted_config, capsys):
    assert run_cli("run", str(scripted_config), "--say", "hi", "--json") == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    kinds = [e["kind"] for e in events if e["kind"].startswith("voice.")]  # runtime events come too
    assert kinds[0] == "voice.transcript" and kinds[-1] == "voice.turn_done"
    assert "voice.token" in kinds
    assert events[-1]["reply_text"] == "Hello from the robot. How can I help?"
    assert events[-1]["status"] == "completed"


def test_output_writes_the_spoken_reply_to_a_wav(tmp_path, capsys):
    config = write_config(tmp_path, sink="device")  # --output overrides the device
    reply = tmp_path / "reply.wav"
    assert run_cli("run", str(config), "--say", "hi", "--output", str(reply)) == 0
    with wave.open(str(reply)) as w:
        assert w.getframerate() == 16000
        assert w.getnframes() > 16000 * 0.2  # FakeTTS: 10 ms per character of the reply


def test_a_stop_phrase_stops_instead_of_answering(scripted_config, capsys):
    assert run_cli("run", str(scripted_config), "--say", "stop", "--json") == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    kinds = [e["kind"] for e in events]
    assert "voice.stopped" in kinds and "control.stop" in kinds
    # No agent turn: the only turn is the spoken confirmation, said once.
    assert [e["text"] for e in events if e["kind"] == "voice.turn_started"] == ["Stopped."]


def test_a_config_error_is_one_line_without_traceback_and_exit_status_2(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("stt:\n  beam_sise: 2\n")
    assert run_cli("run", str(bad), "--say", "hi") == 2
    err = capsys.readouterr().err
    assert err == f"edgevox: error: {bad}:2: unknown key 'stt.beam_sise'; did you mean 'stt.beam_size'?\n"


def test_a_missing_input_file_is_a_clear_error(scripted_config, capsys):
    assert run_cli("run", str(scripted_config), "--input", "no_such.wav") == 2
    assert "--input no_such.wav: no such file" in capsys.readouterr().err


def test_no_audio_device_explains_how_to_run_headless(tmp_path, capsys, monkeypatch):
    import edgevox.check

    monkeypatch.setattr(edgevox.check, "list_audio_devices", lambda: [])
    config = write_config(tmp_path, sink="device")
    config.write_text(config.read_text().replace("source: text", "source: device"))
    assert run_cli("run", str(config)) == 2
    err = capsys.readouterr().err
    assert "no audio device found" in err
    assert "--input question.wav --output reply.wav" in err and "--text" in err
    assert "Traceback" not in err


def _cli(*args: str, **kw) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.Popen(
        [sys.executable, "-m", "edgevox", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
        **kw,
    )


@pytest.mark.parametrize(
    ("signum", "expected"),
    [(signal.SIGINT, 130), (signal.SIGTERM, 0)],
    ids=["ctrl-c exits 130", "sigterm (systemd stop) exits 0"],
)
def test_ctrl_c_shuts_a_running_application_down_cleanly_within_2_s(scripted_config, signum, expected):
    proc = _cli("run", str(scripted_config), "--text", "--json")
    try:
        proc.stdin.write("hello\n")
        proc.stdin.flush()
        # The answered turn proves the application is up and running.
        for line in proc.stdout:
            if json.loads(line)["kind"] == "voice.turn_done":
                break
        else:
            pytest.fail(f"no turn_done; stderr: {proc.stderr.read()}")
        sent = time.monotonic()
        proc.send_signal(signum)
        code = proc.wait(timeout=10)
        elapsed = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    stderr = proc.stderr.read()
    assert code == expected, stderr  # Ctrl-C: the shell's 128 + SIGINT, after a clean stop
    assert elapsed < 2.0, f"shutdown took {elapsed:.2f} s"
    assert "Traceback" not in stderr and "not clean" not in stderr


def test_end_of_typed_input_ends_the_run(scripted_config):
    proc = _cli("run", str(scripted_config), "--text")
    out, err = proc.communicate("what is up?\n", timeout=30)
    assert proc.returncode == 0, err
    assert "scripted: Hello from the robot." in out


def test_a_typed_stop_halts_the_reply_being_written(tmp_path):
    """`--text` reads stdin on its own thread: "stop" typed while the reply is still being
    generated (a slow CPU: 50 ms per token, ~4 s in all) stops it at once, confirms, and the
    next line is answered."""
    story = " ".join(f"word{i}" for i in range(80)) + "."
    config = (
        write_config(tmp_path)
        .read_text()
        .replace('{default: "Hello from the robot. How can I help?"}', f'{{default: "{story}", token_delay_s: 0.05}}')
    )
    path = tmp_path / "slow.yaml"
    path.write_text(config, encoding="utf-8")
    proc = _cli("run", str(path), "--text", "--json")
    try:
        proc.stdin.write("tell me a long story\n")
        proc.stdin.flush()
        events = []
        for line in proc.stdout:
            events.append(json.loads(line))
            if events[-1]["kind"] == "voice.token":
                break
        typed = time.monotonic()
        proc.stdin.write("stop\n")
        proc.stdin.flush()
        for line in proc.stdout:
            events.append(json.loads(line))
            if events[-1]["kind"] == "voice.stopped":
                break
        stop_s = time.monotonic() - typed
        out, err = proc.communicate("", timeout=30)  # end of input: the app finishes and exits
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    events += [json.loads(line) for line in out.splitlines()]
    assert proc.returncode == 0, err
    assert stop_s < 1.0, f"the typed stop took {stop_s:.2f} s"
    done = [e for e in events if e["kind"] == "voice.turn_done"]
    assert done[0]["status"] == "stopped" and len(done[0]["reply_text"]) < len(story) / 2
    assert [d["reply_text"] for d in done[1:]] == ["Stopped."]
