"""``edgevox check`` and ``edgevox devices``."""

from __future__ import annotations

import pytest

from edgevox.cli.main import main

from .conftest import write_config


def test_check_reports_what_would_run(scripted_config, capsys):
    assert main(["check", str(scripted_config)]) == 0
    out = capsys.readouterr().out
    assert "config is valid (scripted)" in out
    assert "custom edgevox.testing:ScriptedLLM" in out
    assert "answers with" in out and "assistant" in out
    assert "typed text (stdin)" in out and "none (replies as text)" in out
    assert "bridge zenoh" in out and "disabled" in out
    assert "ready to run" in out


def test_check_fails_on_a_tool_that_cannot_be_imported(tmp_path, capsys):
    config = write_config(tmp_path, extra="    tools: [no_such_module:move]\n")
    assert main(["check", str(config)]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "agents.assistant.tools.0: cannot import 'no_such_module:move'" in out


def test_check_resolves_the_embedded_models_of_the_default_config(capsys):
    # The models ship in wheels; a missing one is a failure of what we ship, not a skip.
    code = main(["check", "default", "--input", __file__, "--output", "out.wav"])
    out = capsys.readouterr().out
    assert "whisper-tiny.en ->" in out and "smollm2-135m ->" in out and "piper-joe-medium ->" in out
    assert "cannot read WAV" in out  # the .py file given as --input is not a WAV: reported, not a traceback
    assert code == 1
    # Where each engine runs, as its "auto" settings resolve on this machine (no GPU here).
    assert "STT whisper-tiny.en runs on cpu int8" in out
    assert "LLM smollm2-135m runs on cpu," in out and "decode" in out
    assert "TTS piper-joe-medium runs on cpu," in out


def test_check_says_in_one_line_when_a_gpu_is_asked_for_that_the_wheels_cannot_use(tmp_path, capsys):
    config = tmp_path / "gpu.yaml"
    config.write_text("name: gpu\nstt:\n  device: cuda\nagents:\n  assistant: {}\n", encoding="utf-8")
    assert main(["check", str(config), "--input", __file__, "--output", str(tmp_path / "out.wav")]) == 1
    out = capsys.readouterr().out
    assert "stt.device = cuda, but CTranslate2" in out and "or set stt.device: cpu" in out


def test_check_starts_an_enabled_zenoh_bridge_to_prove_it_can(tmp_path, capsys):
    pytest.importorskip("zenoh", reason="eclipse-zenoh is an optional extra")
    config = write_config(
        tmp_path,
        extra="bridges:\n  zenoh:\n    enabled: true\n    namespace: edgevox/check-test\n    listen: ['tcp/127.0.0.1:0']\n",
    )
    assert main(["check", str(config)]) == 0
    assert "session opens (namespace edgevox/check-test" in capsys.readouterr().out


def test_devices_without_any_device_explains_what_to_do(monkeypatch, capsys):
    import edgevox.check

    monkeypatch.setattr(edgevox.check, "list_audio_devices", lambda: [])
    assert main(["devices"]) == 1
    out = capsys.readouterr().out
    assert "no usable audio device" in out and "--input question.wav --output reply.wav" in out


def test_devices_lists_what_portaudio_sees(capsys):
    from edgevox.check import list_audio_devices

    devices = list_audio_devices()
    code = main(["devices"])
    out = capsys.readouterr().out
    if devices:
        assert code == 0 and devices[0]["name"] in out
    else:
        assert code == 1 and "no usable audio device" in out


def test_check_reports_a_zenoh_listen_port_that_is_taken(tmp_path, capsys):
    pytest.importorskip("zenoh", reason="eclipse-zenoh is an optional extra")
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        config = write_config(
            tmp_path,
            extra=f"bridges:\n  zenoh:\n    enabled: true\n    listen: ['tcp/127.0.0.1:{port}']\n",
        )
        assert main(["check", str(config)]) == 1
    out = capsys.readouterr().out
    assert "bridge zenoh" in out and "cannot open a Zenoh session" in out


def _silent_wav(path):
    import wave

    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes(b"\0\0" * 1600)
    return str(path)


def test_check_loads_the_wake_word_model_and_refuses_a_broken_one(tmp_path, capsys):
    import json

    wav = _silent_wav(tmp_path / "q.wav")
    config = write_config(tmp_path, extra="wake:\n  model: alexa\n")
    assert main(["check", str(config), "--input", wav]) == 0
    out = capsys.readouterr().out
    assert "wake word" in out and 'say "Alexa" (threshold 0.9, window 8 s)' in out
    # Typed input never uses it; said so instead of loading it.
    assert main(["check", str(config)]) == 0
    assert "alexa: not used for typed input" in capsys.readouterr().out
    # A file TensorFlow Lite would crash on: one FAIL line naming it, found before `run`.
    (tmp_path / "bad.tflite").write_bytes(b"not a flatbuffer" * 4)
    bad = {"wake_word": "Hi", "model": "bad.tflite", "micro": {"probability_cutoff": 0.5, "sliding_window_size": 5}}
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    broken = write_config(tmp_path, extra=f"wake:\n  model: {tmp_path / 'bad.json'}\n", name="broken.yaml")
    assert main(["check", str(broken), "--input", wav]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "bad.tflite is not a TensorFlow Lite model" in out
