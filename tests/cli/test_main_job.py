"""The README's main job on the real embedded models: spoken question in, spoken answer in a WAV out.

These load the models shipped in wheels; a failure here means something we ship is broken,
so they fail (never skip) when a model is missing.
"""

from __future__ import annotations

import os
import subprocess
import sys
import wave
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _run(*args: str, timeout_s: float = 180) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=timeout_s, env=env, cwd=REPO)


@pytest.mark.models
@pytest.mark.slow
def test_default_config_answers_a_spoken_question_into_a_wav(tmp_path):
    question, reply = tmp_path / "question.wav", tmp_path / "reply.wav"
    made = _run("scripts/make_question_wav.py", str(question), "Hello robot. What is your favorite color?")
    assert made.returncode == 0, made.stderr
    result = _run(
        "-m", "edgevox", "run", "default", "--input", str(question), "--output", str(reply), "--realtime", "no"
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout.lower()
    assert "you: hello robot" in out, result.stdout  # what the embedded Whisper heard
    reply_line = out.split("assistant:", 1)[1].splitlines()[0]
    assert reply_line.strip() and "(no reply)" not in reply_line, result.stdout
    with wave.open(str(reply)) as w:
        seconds = w.getnframes() / w.getframerate()
    assert seconds > 0.5, f"reply.wav holds only {seconds:.2f} s"


@pytest.mark.models
def test_say_on_the_text_config_answers_with_the_embedded_llm():
    result = _run("-m", "edgevox", "run", "text", "--say", "Say hello.", timeout_s=120)
    assert result.returncode == 0, result.stderr
    reply = result.stdout.split("text-assistant:", 1)[1].strip()
    assert reply and reply != "(no reply)"
