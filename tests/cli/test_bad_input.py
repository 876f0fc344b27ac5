"""Bad input from the command line: every case is one line naming the file or value and the
fix, a non-zero exit, and nothing loads (or runs) that does not have to."""

from __future__ import annotations

import time
import wave
from pathlib import Path

import numpy as np
import pytest

from edgevox.cli.main import main

from .conftest import write_config

SHARED_SPEECH = Path(__file__).resolve().parents[3] / "shared" / "speech"


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def write_wav(path: Path, samples: np.ndarray, rate: int = 16000) -> Path:
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes((samples * 32767).astype("<i2").tobytes())
    return path


def with_llm_engine(folder: Path, engine: str, name: str) -> Path:
    """The scripted config with its LLM built by ``engine`` instead (no options)."""
    scripted = 'engine: edgevox.testing:ScriptedLLM\n  options: {default: "Hello from the robot. How can I help?"}'
    text = write_config(folder).read_text()
    assert scripted in text
    path = folder / name
    path.write_text(text.replace(scripted, f"engine: {engine}"))
    return path


# --- config files ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"name: caf\xe9\n", "bad.yaml:1:10: not UTF-8 text (byte 0xe9); save the file as UTF-8"),
        (b"\x00\x01\x02ELF binary", "bad.yaml: is a binary file, not a YAML config"),
        (b"a: " + b"[" * 3000 + b"]" * 3000 + b"\n", "nested more than 64 levels deep"),
        (b"runtime:\n  shutdown_timeout_s: .inf\n", "runtime.shutdown_timeout_s = .inf: must be a finite number"),
        (b"llm:\n  max_tokens: 100000\n", "max_tokens = 100000 is more than the context window"),
        (b"llm:\n  threads: 100000\n", "llm.threads = 100000: must be 'auto' or <= 256"),
        (b"a: &a [1, *a]\n", "refers to a value that contains it"),
    ],
)
def test_a_broken_config_file_is_one_line_naming_it(tmp_path, capsys, content, expected):
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(content)
    assert main(["run", str(bad), "--say", "hi"]) == 2
    line = one_error_line(capsys)
    assert line.startswith(f"edgevox: error: {bad}")
    assert expected in line


def test_an_alias_bomb_is_refused_at_once(tmp_path, capsys):
    rows = ['a0: &a0 ["x","x","x","x","x","x","x","x","x"]']
    rows += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 9)]  # 9**9 values
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("\n".join(rows) + "\n")
    t0 = time.monotonic()
    assert main(["check", str(bomb)]) == 2
    assert time.monotonic() - t0 < 5.0
    assert "aliases (*name) expand this value to more than 100,000 entries" in one_error_line(capsys)


def test_an_infinite_duration_from_the_environment_is_refused_before_anything_runs(tmp_path, capsys, monkeypatch):
    config = write_config(tmp_path, extra="runtime:\n  shutdown_timeout_s: ${T:-1e999}\n")
    assert main(["run", str(config), "--say", "hi"]) == 2
    assert "runtime.shutdown_timeout_s = .inf: must be a finite number" in one_error_line(capsys)
    monkeypatch.setenv("T", "nan")
    assert main(["run", str(config), "--say", "hi"]) == 2
    assert "runtime.shutdown_timeout_s" in one_error_line(capsys)


# --- tool modules ------------------------------------------------------------------------------

TOOL_MODULES = {
    "raises": (
        'raise RuntimeError("no robot attached")\n',
        "importing edgevox_t_raises raised RuntimeError: no robot attached",
    ),
    "syntax": ("def move(:\n", "edgevox_t_syntax.py:1: invalid syntax; fix the syntax error there"),
    "exits": ("import sys\nsys.exit(3)\n", "importing edgevox_t_exits called sys.exit(3)"),
}


@pytest.mark.parametrize("kind", sorted(TOOL_MODULES))
@pytest.mark.parametrize("command", ["run", "check"])
def test_a_tool_module_that_fails_at_import_is_named_in_run_and_check(tmp_path, capsys, monkeypatch, kind, command):
    source, expected = TOOL_MODULES[kind]
    module = f"edgevox_t_{kind}"
    (tmp_path / f"{module}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    config = write_config(tmp_path, extra=f"    tools: [{module}:move]\n")
    argv = ["run", str(config), "--say", "hi"] if command == "run" else ["check", str(config)]
    code = main(argv)
    out = capsys.readouterr()
    text = out.err + out.out
    assert "Traceback" not in text
    assert expected in text
    assert f"agents.assistant.tools.0: cannot import '{module}:move'" in text
    assert code == (2 if command == "run" else 1)


def test_check_imports_an_engine_reference_whose_module_has_no_dot(tmp_path, capsys):
    path = with_llm_engine(tmp_path, "os:system", "os.yaml")
    assert main(["check", str(path)]) == 1
    out = capsys.readouterr().out
    assert "FAIL LLM engine" in out
    assert "llm.engine = 'os:system' cannot be called with no options" in out
    assert main(["run", str(path), "--say", "hi"]) == 2
    assert "llm.engine = 'os:system'" in one_error_line(capsys)


def test_a_custom_engine_that_is_not_an_engine_is_named(tmp_path, capsys, monkeypatch):
    (tmp_path / "edgevox_t_engine.py").write_text("class Thing:\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    path = with_llm_engine(tmp_path, "edgevox_t_engine:Thing", "thing.yaml")
    assert main(["run", str(path), "--say", "hi"]) == 2
    line = one_error_line(capsys)
    assert "returned a Thing, which is not a valid LLM engine (it needs: count_tokens, stream" in line


# --- WAV input ---------------------------------------------------------------------------------


def _wav_config(tmp_path: Path) -> Path:
    # A real webrtc VAD with a scripted STT: a WAV test needs no model.
    extra = "stt:\n  engine: edgevox.testing:FakeSTT\n  options: {default: go forward}\n"
    return write_config(tmp_path, extra=extra, sink="device")


def test_a_wav_with_a_zero_hz_header_is_refused_before_any_model_loads(tmp_path, capsys, monkeypatch):
    speech = SHARED_SPEECH / "classic" / "goforward.wav"
    data = bytearray(speech.read_bytes())
    data[24:28] = (0).to_bytes(4, "little")
    zero = tmp_path / "zero.wav"
    zero.write_bytes(bytes(data))
    from edgevox.app import App

    def no_build(*a, **k):
        raise AssertionError("the models were loaded for an unreadable WAV")

    monkeypatch.setattr(App, "build", classmethod(no_build))
    assert main(["run", "default", "--input", str(zero), "--output", str(tmp_path / "out.wav")]) == 2
    assert "zero.wav: the WAV header says 0 Hz" in one_error_line(capsys)
    garbage = tmp_path / "garbage.wav"
    garbage.write_bytes(b"RIFF" + b"\x00" * 40)
    assert main(["run", "default", "--input", str(garbage)]) == 2
    assert "garbage.wav: cannot read WAV file" in one_error_line(capsys)


def test_an_empty_wav_is_an_error_not_an_empty_reply(tmp_path, capsys):
    empty = write_wav(tmp_path / "empty.wav", np.zeros(0, dtype=np.float32))
    assert main(["run", str(_wav_config(tmp_path)), "--input", str(empty), "--output", str(tmp_path / "o.wav")]) == 2
    assert "empty.wav: the WAV file holds no audio (0 samples)" in one_error_line(capsys)
    assert not (tmp_path / "o.wav").exists()


def test_a_wav_without_speech_exits_1_saying_nothing_was_heard(tmp_path, capsys):
    silence = write_wav(tmp_path / "silence.wav", np.zeros(32000, dtype=np.float32))
    config = _wav_config(tmp_path)
    code = main(["run", str(config), "--input", str(silence), "--output", str(tmp_path / "o.wav"), "--realtime", "no"])
    assert code == 1
    assert "no speech was heard in" in capsys.readouterr().err


# --- turns that fail ---------------------------------------------------------------------------


def test_a_say_turn_that_fails_exits_non_zero_naming_why(tmp_path, capsys, monkeypatch):
    # An LLM that loads (and warms up) fine, then fails on the user's turn.
    (tmp_path / "edgevox_t_flaky.py").write_text(
        "from edgevox.errors import EngineError\n"
        "from edgevox.testing import ScriptedLLM\n"
        "def reply(messages, grammar):\n"
        "    if 'hi' in str(messages[-1]['content']):\n"
        "        raise EngineError('the LLM lost its GPU')\n"
        "    return 'ok'\n"
        "def make():\n"
        "    return ScriptedLLM(reply)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    path = with_llm_engine(tmp_path, "edgevox_t_flaky:make", "failing.yaml")
    assert main(["run", str(path), "--say", "hi"]) == 1
    err = capsys.readouterr().err
    assert "1 turn(s) failed" in err and "the LLM lost its GPU" in err
    assert main(["run", str(path), "--say", "hello"]) == 0  # a turn that works still exits 0


def test_say_text_that_is_not_utf8_is_one_line(scripted_config, capsys):
    text = b"caf\xe9 please".decode("utf-8", "surrogateescape")  # what argv holds for latin-1 bytes
    assert main(["run", str(scripted_config), "--say", text]) == 2
    assert "--say: the text is not UTF-8 (byte 0xe9 at position 3)" in one_error_line(capsys)


@pytest.mark.parametrize("value", ["-1", "0", "nan", "inf", "1e999", "soon"])
def test_a_bad_timeout_is_argparse_one_line_and_exit_2(scripted_config, capsys, value):
    with pytest.raises(SystemExit) as exit_info:
        main(["run", str(scripted_config), "--say", "hi", f"--timeout={value}"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"argument --timeout: '{value}'" in err and "Traceback" not in err


def test_a_folder_given_as_input_is_named(scripted_config, tmp_path, capsys):
    assert main(["run", str(scripted_config), "--input", str(tmp_path)]) == 2
    assert f"--input {tmp_path}: is a folder; give a WAV file" in one_error_line(capsys)


def test_a_log_file_that_cannot_be_written_is_named_before_anything_loads(tmp_path, capsys):
    config = write_config(tmp_path, extra=f"logging:\n  file: {tmp_path}/missing/folder/log.txt\n")
    assert main(["run", str(config), "--say", "hi"]) == 2
    assert f"logging.file = {tmp_path}/missing/folder/log.txt: cannot write there" in one_error_line(capsys)


def test_events_file_records_every_event_of_the_run(tmp_path, capsys):
    import json

    events = tmp_path / "events.jsonl"
    config = write_config(tmp_path, extra=f"logging:\n  events_file: {events}\n")
    assert main(["run", str(config), "--say", "hi"]) == 0
    kinds = [json.loads(line)["kind"] for line in events.read_text().splitlines()]
    assert "voice.transcript" in kinds and "voice.turn_done" in kinds
