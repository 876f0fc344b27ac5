"""Configs for CLI tests that run whole applications without models (scripted engines)."""

from __future__ import annotations

from pathlib import Path

import pytest

SCRIPTED = """\
name: scripted
llm:
  engine: edgevox.testing:ScriptedLLM
  options: {{default: "Hello from the robot. How can I help?"}}
tts:
  engine: edgevox.testing:FakeTTS
  options: {{sample_rate_hz: 16000}}
audio:
  input: {{source: text}}
  output: {{sink: {sink}}}
agents:
  assistant:
    instructions: Be brief.
{extra}"""


def write_config(folder: Path, *, sink: str = "none", extra: str = "", name: str = "scripted.yaml") -> Path:
    path = folder / name
    path.write_text(SCRIPTED.format(sink=sink, extra=extra), encoding="utf-8")
    return path


@pytest.fixture
def scripted_config(tmp_path: Path) -> Path:
    return write_config(tmp_path)
