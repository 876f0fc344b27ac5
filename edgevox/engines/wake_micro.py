"""Wake word adapter over microWakeWord (``pymicro-wakeword``, the ``wake`` extra).

``pymicro-wakeword`` 2.5.0 ships four trained models inside its wheel (:data:`EMBEDDED_WAKE_MODELS`,
~50-80 KB each, each with a JSON config giving its phrase, ``probability_cutoff`` and
``sliding_window_size``) and its own TensorFlow Lite C library, so a wake word works with no
network. ``pymicro_features`` turns 16 kHz 16-bit audio into one feature vector per 10 ms; the
model runs once per ``stride`` feature vectors (3: every 30 ms) and the mean of the last
``sliding_window`` outputs is compared with the threshold.

:class:`MicroWakeWordDetector` is what :class:`edgevox.voice.wake.WakeWordDetector` asks for:
:meth:`~MicroWakeWordDetector.process` takes float32 frames of any length at the pipeline rate
(resampled to 16 kHz when it differs) and returns the smoothed probability when the wake word
was detected in them, else None. The capture thread calls it (never the device callback):
~0.2 ms of work per 20 ms frame on one core.

We read the model's JSON ourselves and build ``MicroWakeWord`` directly (instead of
``from_builtin``) so a configured threshold or window replaces the model's own, and a bad path
or JSON is a :class:`~edgevox.errors.ModelError` naming the file.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any, Final

import numpy as np

from edgevox.engines._util import float_to_pcm16, require
from edgevox.errors import ModelError

EMBEDDED_WAKE_MODELS: Final = ("okay_nabu", "hey_jarvis", "hey_mycroft", "alexa")
"""The models inside the ``pymicro-wakeword`` 2.5.0 wheel (``wake.model`` names)."""
DETECTOR_RATE_HZ: Final = 16000
"""microWakeWord's features are computed from 16 kHz audio."""


def embedded_models_dir() -> Path | None:
    """The folder of the embedded models, found without importing the package (None: not installed)."""
    spec = importlib.util.find_spec("pymicro_wakeword")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "models"


def model_config_path(model: str | Path) -> Path:
    """The JSON config of ``model``: an embedded name, a ``.json`` path, or a ``.tflite`` path
    with its ``.json`` beside it."""
    name = str(model)
    if name in EMBEDDED_WAKE_MODELS:
        folder = embedded_models_dir()
        if folder is None:
            require("pymicro_wakeword", package="pymicro-wakeword", extra="wake", purpose="the wake word")
            raise ModelError("pymicro_wakeword is installed without its models folder: reinstall pymicro-wakeword")
        return folder / f"{name}.json"
    path = Path(name)
    return path.with_suffix(".json") if path.suffix == ".tflite" else path


def read_model_config(model: str | Path) -> dict[str, Any]:
    """The model's JSON config (``wake_word``, ``model``, ``micro.probability_cutoff`` ...)."""
    path = model_config_path(model)
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
        micro = config["micro"]
        return {
            "phrase": str(config["wake_word"]),
            "tflite": path.parent / str(config["model"]),
            "threshold": float(micro["probability_cutoff"]),
            "sliding_window": int(micro["sliding_window_size"]),
        }
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ModelError(f"cannot read the wake word model config {path}: {exc!r}") from exc


def _check_tflite(path: Path) -> None:
    """TensorFlow Lite's C library crashes the process on a missing or malformed model (it
    returns NULL and pymicro-wakeword uses it): check the file is a TFLite flatbuffer first."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(8)
    except OSError as exc:
        raise ModelError(f"cannot read the wake word model {path}: {exc.strerror or exc}") from exc
    if len(head) < 8 or head[4:8] != b"TFL3":
        raise ModelError(f"{path} is not a TensorFlow Lite model (no TFL3 identifier): give a microWakeWord .tflite")


class MicroWakeWordDetector:
    """A microWakeWord model listening to a stream of frames (one thread at a time: the capture thread)."""

    def __init__(
        self,
        model: str | Path = "okay_nabu",
        *,
        threshold: float | None = None,
        sliding_window: int | None = None,
        sample_rate_hz: int = DETECTOR_RATE_HZ,
    ) -> None:
        mww = require("pymicro_wakeword", package="pymicro-wakeword", extra="wake", purpose="the wake word")
        config = read_model_config(model)
        lib_dir = Path(str(mww.__file__)).parent / "lib"
        lib = next(iter(lib_dir.glob("*tensorflowlite_c.*")), None)
        if lib is None:
            raise ModelError(f"no TensorFlow Lite library in {lib_dir}: reinstall pymicro-wakeword")
        self.name = Path(str(config["tflite"])).stem
        """The model's name (``okay_nabu``, or a custom file's stem)."""
        self.phrase: str = config["phrase"]
        """What to say (``Okay Nabu``)."""
        self.threshold = float(threshold if threshold is not None else config["threshold"])
        """Detected when the mean probability over the window exceeds this."""
        self.sliding_window = int(sliding_window if sliding_window is not None else config["sliding_window"])
        self.sample_rate_hz = sample_rate_hz
        _check_tflite(Path(config["tflite"]))
        try:
            self._model = mww.MicroWakeWord(
                self.name,
                wake_word=self.phrase,
                tflite_model=config["tflite"],
                probability_cutoff=self.threshold,
                sliding_window_size=self.sliding_window,
                trained_languages=[],
                libtensorflowlite_c_path=lib,
            )
        except Exception as exc:  # noqa: BLE001 - ctypes/TFLite raise their own types
            raise ModelError(f"cannot load the wake word model {config['tflite']}: {exc!r}") from exc
        if not self._model.interpreter or not self._model.model:
            raise ModelError(f"cannot load the wake word model {config['tflite']}: TensorFlow Lite refused it")
        self._features = mww.MicroWakeWordFeatures()
        self._resampler: Any = None
        if sample_rate_hz != DETECTOR_RATE_HZ:
            from edgevox.engines.resample import Resampler

            self._resampler = Resampler(sample_rate_hz, DETECTOR_RATE_HZ)

    def process(self, frame: np.ndarray) -> float | None:
        """Feed float32 mono audio at :attr:`sample_rate_hz`; the smoothed probability if the
        wake word was detected in it, else None. Call :meth:`reset` before listening again."""
        audio = np.asarray(frame, dtype=np.float32).reshape(-1)
        if self._resampler is not None:
            audio = self._resampler.process(audio)
        best: float | None = None
        for features in self._features.process_streaming(float_to_pcm16(audio).tobytes()):
            prob = self._model.process_streaming_prob(features)
            if prob is not None and prob > self.threshold and (best is None or prob > best):
                best = prob
        return best

    def reset(self) -> None:
        """Forget the audio heard so far (reloads the model's streaming state, ~1 ms)."""
        self._features.reset()
        self._model.reset()

    def close(self) -> None:
        self._model.close()
