"""The microWakeWord adapter with the real embedded models, on real audio: the embedded Piper
voice saying each wake phrase, and human speech from ../shared/speech that says none."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from edgevox.engines.audio_wav import read_wav
from edgevox.engines.resample import resample
from edgevox.engines.wake_micro import EMBEDDED_WAKE_MODELS, MicroWakeWordDetector, model_config_path
from edgevox.errors import ModelError

pytestmark = pytest.mark.models

PHRASES = {"okay_nabu": "Okay Nabu.", "hey_jarvis": "Hey Jarvis.", "hey_mycroft": "Hey Mycroft.", "alexa": "Alexa."}


def said(piper_tts, text: str, rate_hz: int = 16000) -> np.ndarray:
    audio = np.concatenate(list(piper_tts.synthesize(text)))
    speech = 0.5 * resample(audio, piper_tts.sample_rate_hz, rate_hz)
    pad = np.zeros(rate_hz // 2, dtype=np.float32)
    return np.concatenate([pad, speech, pad]).astype(np.float32)


def detections(detector: MicroWakeWordDetector, audio: np.ndarray, frame: int) -> list[tuple[float, float]]:
    """(seconds, probability) of each detection, resetting after each as the loop does."""
    found = []
    for i in range(0, audio.shape[0] - frame + 1, frame):
        p = detector.process(audio[i : i + frame])
        if p is not None:
            found.append(((i + frame) / detector.sample_rate_hz, p))
            detector.reset()
    return found


@pytest.mark.parametrize("model", EMBEDDED_WAKE_MODELS)
def test_each_embedded_model_fires_once_on_its_phrase_and_reports_it(piper_tts, model):
    detector = MicroWakeWordDetector(model)
    assert detector.name == model and detector.phrase.rstrip(".") == PHRASES[model].rstrip(".")
    audio = said(piper_tts, PHRASES[model])
    found = detections(detector, audio, 320)
    assert len(found) == 1, found
    at_s, probability = found[0]
    assert probability > detector.threshold
    assert at_s < audio.shape[0] / 16000 - 0.2, "detected within the phrase's audio, not after the padding"


def test_a_model_does_not_fire_on_another_models_phrase(piper_tts):
    detector = MicroWakeWordDetector("alexa")
    for other in ("Okay Nabu.", "Hey Jarvis.", "Hey Mycroft."):
        assert detections(detector, said(piper_tts, other), 320) == [], other


def test_human_commands_without_the_wake_word_do_not_wake_any_model(speech_dir):
    clips = sorted((speech_dir / "commands").glob("stp_*.wav"))[:8]
    assert clips
    audio = []
    for path in clips:
        a, rate = read_wav(path)
        audio.append(resample(a, rate, 16000))
    stream = np.concatenate(audio).astype(np.float32)
    for model in EMBEDDED_WAKE_MODELS:
        assert detections(MicroWakeWordDetector(model), stream, 320) == [], model


def test_a_48_khz_pipeline_is_resampled_for_the_detector(piper_tts):
    detector = MicroWakeWordDetector("alexa", sample_rate_hz=48000)
    assert len(detections(detector, said(piper_tts, "Alexa.", rate_hz=48000), 960)) == 1


def test_a_higher_threshold_than_the_speech_reaches_never_fires(piper_tts):
    detector = MicroWakeWordDetector("alexa", threshold=0.9999, sliding_window=10)
    assert detector.threshold == 0.9999 and detector.sliding_window == 10
    assert detections(detector, said(piper_tts, "Alexa."), 320) == []


def test_a_model_given_by_path_loads_from_its_json_or_its_tflite(tmp_path, piper_tts):
    src = model_config_path("hey_jarvis")
    shutil.copy(src, tmp_path / "jarvis.json")
    shutil.copy(src.with_suffix(".tflite"), tmp_path / "hey_jarvis.tflite")
    for ref in (tmp_path / "jarvis.json", tmp_path / "hey_jarvis.tflite"):
        if ref.suffix == ".tflite":
            shutil.copy(src, tmp_path / "hey_jarvis.json")
        detector = MicroWakeWordDetector(ref)
        assert detector.phrase == "Hey Jarvis" and detector.threshold == 0.97
        assert len(detections(detector, said(piper_tts, "Hey Jarvis."), 320)) == 1


def test_a_broken_model_config_is_a_model_error_naming_the_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"wake_word": "Hi", "model": "missing.tflite"}))
    with pytest.raises(ModelError, match="bad.json"):
        MicroWakeWordDetector(bad)
    missing = tmp_path / "nothing.json"
    with pytest.raises(ModelError, match="nothing.json"):
        MicroWakeWordDetector(missing)


def test_a_file_that_is_not_a_tflite_model_is_refused_before_tensorflow_lite_sees_it(tmp_path):
    # TensorFlow Lite's C library would crash the process on either of these.
    config = {"wake_word": "Hi", "micro": {"probability_cutoff": 0.5, "sliding_window_size": 5}}
    (tmp_path / "garbage.tflite").write_bytes(b"not a flatbuffer" * 4)
    (tmp_path / "garbage.json").write_text(json.dumps(config | {"model": "garbage.tflite"}))
    with pytest.raises(ModelError, match="garbage.tflite is not a TensorFlow Lite model"):
        MicroWakeWordDetector(tmp_path / "garbage.json")
    (tmp_path / "gone.json").write_text(json.dumps(config | {"model": "gone.tflite"}))
    with pytest.raises(ModelError, match="gone.tflite"):
        MicroWakeWordDetector(tmp_path / "gone.json")
