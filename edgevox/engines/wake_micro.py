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
or JSON is a :class:`~edgevox.errors.ModelError` naming the file. Model files are native input:
every JSON field is checked for type and range (``sliding_window_size: 0`` would divide by zero
on the capture thread), and the ``.tflite`` is first loaded and run once in a child Python
(:func:`probe_tflite`), because TensorFlow Lite's C code segfaults on a truncated file; the
crash ends the child, and this process raises one line naming the file. Rejected: parsing the
flatbuffer ourselves (a schema copy that would drift, and still not prove the C loader copes).
"""

from __future__ import annotations

import importlib.util
import json
import math
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Final, TypeGuard

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


SLIDING_WINDOW_RANGE: Final = (1, 100)
"""``sliding_window_size`` (model outputs averaged, one per 30 ms): 0 divides by zero in the
capture thread, a negative one fails inside ``deque``; over 100 (3 s) is no wake word."""
FEATURE_STEP_MS: Final = 10
"""``pymicro_features`` gives one feature vector per 10 ms: a model trained on another step cannot listen."""
FEATURES_PER_STEP: Final = 40
"""Values in one feature vector (the model's input is ``stride`` of them)."""
PROBE_TIMEOUT_S: Final = 60.0


def read_model_config(model: str | Path) -> dict[str, Any]:
    """The model's JSON config (``wake_word``, ``model``, ``micro.probability_cutoff`` ...), every
    field checked for type and range (a bad value is a :class:`ModelError` naming the file, the
    field and the fix: it must never reach the capture thread or TensorFlow Lite's C code)."""
    path = model_config_path(model)
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ModelError(f"cannot read the wake word model config {path}: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise ModelError(f"wake model config {path} is not valid JSON ({exc}): give a microWakeWord .json") from exc

    def bad(field: str, value: object, want: str) -> ModelError:
        return ModelError(f"wake model config {path}: {field} = {value!r}: {want}")

    if not isinstance(config, dict):
        raise bad("the file", type(config).__name__, "must be a JSON object (a microWakeWord model config)")
    kind = config.get("type", "micro")
    if kind != "micro":
        raise bad("type", kind, 'must be "micro" (only microWakeWord models are supported)')
    phrase = config.get("wake_word")
    if not isinstance(phrase, str) or not phrase.strip():
        raise bad("wake_word", phrase, 'must be the wake phrase as text (e.g. "Okay Nabu")')
    tflite = config.get("model")
    if not isinstance(tflite, str) or not tflite.strip():
        raise bad("model", tflite, "must be the .tflite file's name, beside the .json")
    micro = config.get("micro")
    if not isinstance(micro, dict):
        raise bad("micro", micro, "must be an object with probability_cutoff and sliding_window_size")
    cutoff = micro.get("probability_cutoff")
    if not _is_number(cutoff) or not 0 < cutoff < 1:
        raise bad("micro.probability_cutoff", cutoff, "must be a number between 0 and 1 (e.g. 0.85)")
    window = micro.get("sliding_window_size")
    low, high = SLIDING_WINDOW_RANGE
    if not isinstance(window, int) or isinstance(window, bool) or not low <= window <= high:
        raise bad("micro.sliding_window_size", window, f"must be a whole number from {low} to {high} (e.g. 5)")
    step = micro.get("feature_step_size", FEATURE_STEP_MS)
    if step != FEATURE_STEP_MS or isinstance(step, bool):
        raise bad("micro.feature_step_size", step, f"must be {FEATURE_STEP_MS} (the features are 10 ms steps)")
    languages = config.get("trained_languages", [])
    if not isinstance(languages, list) or not all(isinstance(x, str) for x in languages):
        raise bad("trained_languages", languages, 'must be a list of language codes (e.g. ["en"])')
    return {
        "phrase": phrase.strip(),
        "tflite": path.parent / tflite,
        "threshold": float(cutoff),
        "sliding_window": window,
    }


def _is_number(value: object) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _check_tflite(path: Path) -> None:
    """A quick look before the child process: the file exists and is a TFLite flatbuffer."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(8)
    except OSError as exc:
        raise ModelError(f"cannot read the wake word model {path}: {exc.strerror or exc}") from exc
    if len(head) < 8 or head[4:8] != b"TFL3":
        raise ModelError(f"{path} is not a TensorFlow Lite model (no TFL3 identifier): give a microWakeWord .tflite")


# Run by a child Python: load the model with the same library and run one inference on silence.
_PROBE = """
import json, sys
import numpy as np
import pymicro_wakeword as mww
model = mww.MicroWakeWord("probe", wake_word="probe", tflite_model=sys.argv[1], probability_cutoff=0.5,
    sliding_window_size=1, trained_languages=[], libtensorflowlite_c_path=sys.argv[2])
if not model.interpreter or not model.model:
    sys.exit("TensorFlow Lite refused it")
lib = model.lib
stride = int(model.stride)
need = stride * int(sys.argv[3]) * np.dtype(model.input_dtype).itemsize
got = int(lib.TfLiteTensorByteSize(model.input_tensor))
if stride < 1 or got != need:
    sys.exit(f"its input takes {got} bytes, not {stride} steps of {sys.argv[3]} microWakeWord features")
prob = None
for _ in range(stride):
    prob = model.process_streaming_prob(np.zeros((1, int(sys.argv[3])), dtype=np.float32))
print(json.dumps({"stride": stride, "probability": float(prob)}))
"""

_probed: dict[tuple[str, int, int], str | None] = {}
"""Verdicts of :func:`probe_tflite` by (resolved path, size, mtime): None = the model is good."""
_probe_lock = threading.Lock()


def probe_tflite(path: Path, lib: Path) -> None:
    """Load ``path`` with TensorFlow Lite in a child process first and run it once: a malformed
    file crashes the loader (a truncated download: SIGSEGV), and a crash there is a
    :class:`ModelError` naming the file instead of the end of this process. ~0.3-0.6 s (a Python
    start); the verdict is kept per path, size and modification time, so a process loads each
    file's check once."""
    _check_tflite(path)
    resolved = path.resolve()
    stat = resolved.stat()
    key = (str(resolved), stat.st_size, stat.st_mtime_ns)
    with _probe_lock:
        if key not in _probed:
            _probed[key] = _run_probe(resolved, lib)
        verdict = _probed[key]
    if verdict is not None:
        raise ModelError(f"wake model {path} is not a valid TFLite model {verdict}; give a microWakeWord .tflite")


def _run_probe(path: Path, lib: Path) -> str | None:
    """None if the child loaded and ran the model, else why not (for the error line)."""
    command = [sys.executable, "-c", _PROBE, str(path), str(lib), str(FEATURES_PER_STEP)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        return f"(loading it took over {PROBE_TIMEOUT_S:g} s)"
    except OSError as exc:
        return f"(cannot start a Python to check it): {exc}"
    said = [line.strip() for line in (done.stderr or "").splitlines() if line.strip()]
    last = said[-1] if said else ""
    if done.returncode < 0:
        try:
            name = signal.Signals(-done.returncode).name
        except ValueError:
            name = f"signal {-done.returncode}"
        return f"(the loader crashed): {name}" + (f", TensorFlow Lite said {last!r}" if last else "")
    if done.returncode != 0:
        return f"(the loader refused it): {last or f'exit status {done.returncode}'}"
    try:
        result = json.loads(done.stdout.strip().splitlines()[-1])
        probability = float(result["probability"])
    except (ValueError, KeyError, TypeError, IndexError):
        return f"(its check printed {done.stdout.strip()[-200:]!r})"
    if not 0.0 <= probability <= 1.0:
        return f"(on silence it outputs {probability:g}): not a probability from 0 to 1"
    return None


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
        if not 0 <= self.threshold < 1:  # (0: every smoothed output, as `edgevox eval wake` asks)
            raise ModelError(f"wake word threshold = {self.threshold!r}: must be from 0 to below 1")
        low, high = SLIDING_WINDOW_RANGE
        if not low <= self.sliding_window <= high:
            raise ModelError(f"wake word sliding_window = {self.sliding_window!r}: must be from {low} to {high}")
        self.sample_rate_hz = sample_rate_hz
        probe_tflite(Path(config["tflite"]), lib)
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
