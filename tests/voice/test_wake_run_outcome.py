"""How ``edgevox run`` ends when the voice loop heard no turn: speech without the wake word is
said to be that (not "no speech was heard"), and a capture thread that dies ends the run
with one line and a non-zero status instead of leaving a deaf robot running."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from edgevox.cli.main import main

CONFIG = """\
name: scripted
vad: {{{vad}}}
stt:
  engine: edgevox.testing:FakeSTT
  options: {{default: go forward}}
llm:
  engine: edgevox.testing:ScriptedLLM
  options: {{default: "Going forward."}}
tts:
  engine: edgevox.testing:FakeTTS
  options: {{sample_rate_hz: 16000}}
audio:
  input: {{source: text}}
  output: {{sink: none}}
agents:
  assistant:
    instructions: Be brief.
{extra}"""


class BrokenVAD:
    """A VAD engine (``vad.engine: module:factory``) whose model fails on the first frame."""

    sample_rate_hz = 16000
    frame_ms = 20

    def is_speech(self, frame: np.ndarray) -> bool:
        raise RuntimeError("onnxruntime: invalid input shape")


def write_config(tmp_path: Path, *, vad: str = "confirm: none", extra: str = "") -> Path:
    path = tmp_path / "robot.yaml"
    path.write_text(CONFIG.format(vad=vad, extra=extra), encoding="utf-8")
    return path


def error_lines(capsys: pytest.CaptureFixture[str]) -> list[str]:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return [line for line in err.splitlines() if line.strip()]


@pytest.mark.models  # the embedded microWakeWord model
def test_speech_without_the_wake_word_is_diagnosed_as_that_not_as_no_speech(tmp_path, capsys, speech_dir):
    config = write_config(tmp_path, extra="wake:\n  model: okay_nabu\n  cue: none\n")
    wav = speech_dir / "classic" / "goforward.wav"
    code = main(["run", str(config), "--input", str(wav), "--output", str(tmp_path / "o.wav"), "--realtime", "no"])
    assert code == 1
    lines = error_lines(capsys)
    assert lines[-1].startswith(f"edgevox: speech was heard in {wav} (1 utterance) but never the wake word 'Okay Nabu'")
    assert "wake.model: null" in lines[-1] and not any("no speech was heard" in line for line in lines)


def test_without_a_wake_word_silence_is_still_no_speech(tmp_path, capsys):
    import wave

    silence = tmp_path / "silence.wav"
    with wave.open(str(silence), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes(np.zeros(32000, dtype="<i2").tobytes())
    code = main(["run", str(write_config(tmp_path)), "--input", str(silence), "--output", str(tmp_path / "o.wav")])
    assert code == 1
    assert "no speech was heard in" in error_lines(capsys)[-1]


def test_a_run_whose_capture_thread_dies_exits_1_with_one_line_saying_why(tmp_path, capsys, speech_dir):
    config = write_config(tmp_path, vad=f"engine: '{__name__}:BrokenVAD'")
    wav = speech_dir / "classic" / "goforward.wav"
    # --realtime yes: the file plays at its own pace, as a microphone would; the run must end at
    # once on the failure, not after the file (and never wait for --timeout).
    code = main(["run", str(config), "--input", str(wav), "--output", str(tmp_path / "o.wav"), "--timeout", "60"])
    assert code == 1
    lines = error_lines(capsys)
    assert lines[-1] == (
        "edgevox: the voice loop's capture thread died (RuntimeError: onnxruntime: invalid input shape): "
        "nothing more can be heard, the stop phrase included; the run stopped (the safety stop ran)"
    )
