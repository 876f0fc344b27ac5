"""``edgevox check`` refuses what ``edgevox run`` refuses, with the same line (issue 25).

Before, check kept its own list of what to look at: an unknown builtin engine name, a VAD
engine, an agent's own engine name and the VAD confirmation's sample rate passed check
("ready to run") and failed run; an empty ``safety.stop_phrases`` passed both checks and
ended run in a traceback. Both commands now go through one validation
(:mod:`edgevox.config.engine_checks`, the schema)."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgevox.cli.main import main

from .conftest import write_config


def scripted_with(folder: Path, old: str, new: str) -> Path:
    path = write_config(folder)
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    return path


def error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0].removeprefix("edgevox: error: ")


CASES = [
    pytest.param(
        "name: scripted\n",
        "name: scripted\nsafety:\n  stop_phrases: []\n",
        [],
        "safety.stop_phrases: at least one phrase is needed",
        id="no-stop-phrase",
    ),
    pytest.param(
        "name: scripted\n",
        "name: scripted\nvad:\n  engine: silero\n",
        [],
        "vad.engine = 'silero': unknown engine",
        id="vad-engine-name",
    ),
    pytest.param(
        "engine: edgevox.testing:ScriptedLLM",
        "engine: llamacpp",
        [],
        "llm.engine = 'llamacpp': unknown engine; use one of llama-cpp",
        id="llm-engine-name",
    ),
    pytest.param(
        "    instructions: Be brief.\n",
        "    instructions: Be brief.\n  helper:\n    llm: {engine: llamacpp}\n",
        [],
        "agents.helper.llm.engine = 'llamacpp': unknown engine",
        id="agent-engine-name",
    ),
    pytest.param(
        "name: scripted\n",
        "name: scripted\nvad:\n  confirm: silero\n",
        ["--set", "audio.sample_rate_hz=8000"],
        "vad.confirm = 'silero' needs a 16, 32 or 48 kHz pipeline",
        id="vad-confirm-rate",
    ),
]


@pytest.mark.parametrize(("old", "new", "options", "expected"), CASES)
def test_a_config_run_refuses_is_refused_by_check_with_the_same_line(tmp_path, capsys, old, new, options, expected):
    path = scripted_with(tmp_path, old, new)
    assert main(["run", str(path), "--say", "hi", *options]) == 2
    refused = error_line(capsys.readouterr().err)
    assert expected in refused

    code = main(["check", str(path), *options])
    captured = capsys.readouterr()
    assert "ready to run" not in captured.out
    if code == 2:  # refused while loading the config: the same error line
        assert error_line(captured.err) == refused
    else:
        assert code == 1
        fails = [line for line in captured.out.splitlines() if line.lstrip().startswith("FAIL")]
        assert len(fails) == 1 and fails[0].rstrip().endswith(refused), captured.out


def test_the_scripted_config_is_ready_for_check_and_answers_in_run(tmp_path, capsys):
    # The cases above differ from this config by one key each.
    path = write_config(tmp_path)
    assert main(["check", str(path)]) == 0
    assert "ready to run" in capsys.readouterr().out
    assert main(["run", str(path), "--say", "hi"]) == 0
