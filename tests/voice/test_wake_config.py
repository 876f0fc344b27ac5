"""The ``wake`` config section: checked at load with one-line errors; off by default."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from edgevox.config import parse_config
from edgevox.engines.wake_micro import EMBEDDED_WAKE_MODELS, model_config_path
from edgevox.errors import ConfigError
from edgevox.voice.wake import WakeSettings, load_cue, tone_cue


def error(text: str) -> str:
    with pytest.raises(ConfigError) as info:
        parse_config(text, source="robot.yaml", env={})
    message = str(info.value)
    assert "\n" not in message, message
    return message


def test_no_wake_word_by_default():
    cfg = parse_config("name: x\n", env={})
    assert cfg.wake.model is None and cfg.wake.cue == "tone" and cfg.wake.window_s == 8.0


@pytest.mark.parametrize("model", EMBEDDED_WAKE_MODELS)
def test_every_embedded_model_is_accepted_by_name(model):
    assert parse_config(f"wake:\n  model: {model}\n", env={}).wake.model == model


def test_an_unknown_model_name_lists_the_embedded_ones_and_suggests_the_nearest():
    message = error("wake:\n  model: okay_nabo\n")
    assert message.startswith("robot.yaml:2: wake.model: 'okay_nabo' is not an embedded wake word model ")
    assert "(okay_nabu, hey_jarvis, hey_mycroft, alexa)" in message and "did you mean 'okay_nabu'?" in message


def test_a_model_path_must_exist_with_its_json(tmp_path):
    assert "no such file" in error(f"wake:\n  model: {tmp_path / 'mine.json'}\n")
    shutil.copy(model_config_path("alexa").with_suffix(".tflite"), tmp_path / "mine.tflite")
    message = error(f"wake:\n  model: {tmp_path / 'mine.tflite'}\n")
    assert "no such file" in message and "mine.json" in message  # a .tflite needs its .json beside it
    shutil.copy(model_config_path("alexa"), tmp_path / "mine.json")
    assert parse_config(f"wake:\n  model: {tmp_path / 'mine.tflite'}\n", env={}).wake.model.endswith("mine.tflite")


@pytest.mark.parametrize(
    ("yaml", "expected"),
    [
        ("wake:\n  model: alexa\n  threshold: 1.5\n", "wake.threshold"),
        ("wake:\n  model: alexa\n  threshold: true\n", "wake.threshold"),
        ("wake:\n  model: alexa\n  window_s: 0\n", "wake.window_s"),
        ("wake:\n  model: alexa\n  sliding_window: 0\n", "wake.sliding_window"),
        ("wake:\n  model: alexa\n  stop_check: never\n", "wake.stop_check"),
        ("wake:\n  model: alexa\n  cue: /no/such/ding.wav\n", "wake.cue"),
        ("wake:\n  modle: alexa\n", "did you mean 'wake.model'?"),
    ],
)
def test_bad_values_are_one_line_errors_naming_the_key(yaml, expected):
    assert expected in error(yaml)


def test_a_cue_wav_is_read_and_resampled_to_the_output_rate(tmp_path):
    from edgevox.engines.audio_wav import write_wav

    path = tmp_path / "ding.wav"
    write_wav(path, tone_cue(16000), 16000)
    cfg = parse_config(f"wake:\n  model: alexa\n  cue: {path}\n", env={})
    cue = load_cue(cfg.wake.cue, 22050)
    assert cue is not None and abs(cue.shape[0] - tone_cue(22050).shape[0]) < 50
    assert load_cue("none", 22050) is None
    assert np.array_equal(load_cue("tone", 22050), tone_cue(22050))
    (tmp_path / "bad.wav").write_bytes(b"RIFF nonsense")
    with pytest.raises(ConfigError, match="cannot read it as a WAV file"):
        load_cue(str(tmp_path / "bad.wav"), 16000)


def test_wake_settings_refuse_nonsense_when_built_in_code():
    with pytest.raises(ValueError, match="wake.window_s"):
        WakeSettings(window_s=0)
    with pytest.raises(ValueError, match="wake.pre_roll_ms"):
        WakeSettings(pre_roll_ms=-1)
