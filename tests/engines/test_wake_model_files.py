"""Wake word model files are native input: every JSON field is checked, and the .tflite is
loaded first in a child Python, so a bad file is one line naming it - never a dead capture
thread (``sliding_window_size: 0``) or a segfault of ``edgevox check`` / ``run`` (a truncated
download)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from edgevox.engines.wake_micro import MicroWakeWordDetector, model_config_path, read_model_config
from edgevox.errors import ModelError

pytestmark = pytest.mark.models  # the real embedded microWakeWord model and TensorFlow Lite library

REPO = Path(__file__).resolve().parents[2]


def copy_model(tmp_path: Path, name: str = "okay_nabu", **micro: object) -> Path:
    """okay_nabu copied to ``tmp_path/name.json`` + ``.tflite``, with ``micro`` fields replaced."""
    src = model_config_path("okay_nabu")
    config = json.loads(src.read_text())
    config["model"] = f"{name}.tflite"
    config["micro"].update(micro)
    shutil.copy(src.with_suffix(".tflite"), tmp_path / f"{name}.tflite")
    (tmp_path / f"{name}.json").write_text(json.dumps(config))
    return tmp_path / f"{name}.json"


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("sliding_window_size", 0, "micro.sliding_window_size = 0: must be a whole number from 1 to 100"),
        ("sliding_window_size", -3, "micro.sliding_window_size = -3: must be a whole number"),
        ("sliding_window_size", 2.5, "micro.sliding_window_size = 2.5: must be a whole number"),
        ("sliding_window_size", True, "micro.sliding_window_size = True: must be a whole number"),
        ("sliding_window_size", "5", "micro.sliding_window_size = '5': must be a whole number"),
        ("sliding_window_size", 101, "micro.sliding_window_size = 101"),
        ("probability_cutoff", 0, "micro.probability_cutoff = 0: must be a number between 0 and 1"),
        ("probability_cutoff", 1.5, "micro.probability_cutoff = 1.5: must be a number between 0 and 1"),
        ("probability_cutoff", "high", "micro.probability_cutoff = 'high'"),
        ("probability_cutoff", None, "micro.probability_cutoff = None"),
        ("feature_step_size", 20, "micro.feature_step_size = 20: must be 10"),
    ],
)
def test_every_micro_field_out_of_type_or_range_is_one_line_naming_file_field_and_value(
    tmp_path, field, value, expected
):
    path = copy_model(tmp_path, **{field: value})
    with pytest.raises(ModelError, match="okay_nabu.json") as info:
        MicroWakeWordDetector(path)
    assert expected in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"wake_word": ""}, "wake_word = ''"),
        ({"wake_word": 7}, "wake_word = 7"),
        ({"model": None}, "model = None"),
        ({"micro": [1, 2]}, "micro = [1, 2]"),
        ({"type": "openWakeWord"}, "type = 'openWakeWord'"),
        ({"trained_languages": "en"}, "trained_languages = 'en'"),
    ],
)
def test_every_top_level_field_is_checked(tmp_path, change, expected):
    path = copy_model(tmp_path)
    path.write_text(json.dumps(json.loads(path.read_text()) | change))
    with pytest.raises(ModelError, match="okay_nabu.json") as info:
        read_model_config(path)
    assert expected in str(info.value)


def test_a_config_that_is_not_json_or_not_an_object_is_refused(tmp_path):
    path = copy_model(tmp_path)
    path.write_text("{not json")
    with pytest.raises(ModelError, match="okay_nabu.json is not valid JSON"):
        read_model_config(path)
    path.write_text("[1, 2]")
    with pytest.raises(ModelError, match="must be a JSON object"):
        read_model_config(path)


def test_a_window_or_threshold_given_in_code_is_range_checked_too(tmp_path):
    path = copy_model(tmp_path)
    with pytest.raises(ModelError, match="sliding_window = 0"):
        MicroWakeWordDetector(path, sliding_window=0)
    with pytest.raises(ModelError, match="threshold = 1.0"):
        MicroWakeWordDetector(path, threshold=1.0)


def test_a_good_copy_loads_and_its_window_is_the_models_own(tmp_path):
    detector = MicroWakeWordDetector(copy_model(tmp_path, sliding_window_size=7))
    assert detector.phrase == "Okay Nabu" and detector.sliding_window == 7


def test_a_truncated_tflite_is_an_error_naming_the_file_not_a_crash_of_this_process(tmp_path):
    path = copy_model(tmp_path, name="short")
    tflite = path.with_suffix(".tflite")
    tflite.write_bytes(tflite.read_bytes()[:20000])  # the TFL3 header is intact: only the loader finds out
    with pytest.raises(ModelError) as info:
        MicroWakeWordDetector(path)
    message = str(info.value)
    assert message.startswith(f"wake model {tflite} is not a valid TFLite model (the loader crashed): SIGSEGV")
    assert "\n" not in message


def test_edgevox_check_reports_a_truncated_model_as_one_fail_line_and_exits_1(tmp_path, speech_dir):
    path = copy_model(tmp_path, name="short")
    tflite = path.with_suffix(".tflite")
    tflite.write_bytes(tflite.read_bytes()[:20000])
    wav = speech_dir / "classic" / "goforward.wav"
    args = [
        "check",
        "default",
        "--input",
        str(wav),
        "--output",
        str(tmp_path / "out.wav"),
        "--set",
        f"wake.model={path}",
    ]
    done = subprocess.run(
        [sys.executable, "-m", "edgevox.cli.main", *args], capture_output=True, text=True, cwd=REPO, timeout=300
    )
    assert done.returncode == 1, done.stdout + done.stderr  # before: -11 (SIGSEGV)
    fails = [line for line in done.stdout.splitlines() if line.strip().startswith("FAIL")]
    assert len(fails) == 1 and "wake word" in fails[0] and "the loader crashed" in fails[0], done.stdout
