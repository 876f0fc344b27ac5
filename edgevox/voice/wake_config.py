"""The ``wake`` config section: an optional offline wake word (see :mod:`edgevox.voice.wake`).

::

    wake:
      model: okay_nabu        # or hey_jarvis, hey_mycroft, alexa, or path/to/model.json; null = off
      window_s: 8.0           # follow-ups need no wake word for this long
      cue: tone               # or none, or path/to/cue.wav

Checked at load like every section (unknown keys, strict scalars); a model that is neither an
embedded name nor an existing ``.json``/``.tflite`` file, and a cue WAV that does not exist,
are errors naming the key. Importing this module imports no wake word library.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, StrictFloat, StrictInt, StrictStr, field_validator

from edgevox.config.fields import Section, ShortSeconds
from edgevox.engines.wake_micro import EMBEDDED_WAKE_MODELS


class WakeConfig(Section):
    """An optional wake word: the loop answers only after it (and during the window that follows)."""

    model: StrictStr | None = Field(
        None,
        description=f"Wake word model: one embedded in `pymicro-wakeword` ({', '.join(f'`{m}`' for m in EMBEDDED_WAKE_MODELS)}; the `wake` extra), or a path to a microWakeWord `.json` (or its `.tflite`, with the `.json` beside it); null = no wake word, every utterance is a turn.",
    )
    threshold: Annotated[StrictFloat, Field(gt=0, lt=1)] | None = Field(
        None,
        description="Detection threshold on the smoothed probability (0-1, higher = fewer false wakes and more misses); null = the model's own `probability_cutoff`.",
    )
    sliding_window: Annotated[StrictInt, Field(ge=1, le=100)] | None = Field(
        None,
        description="Model outputs averaged before the threshold (one per 30 ms); null = the model's own `sliding_window_size`.",
    )
    window_s: ShortSeconds = Field(
        8.0,
        description="Conversation window in seconds: after the wake word, the user's last speech or the robot's last reply, follow-ups need no wake word until it closes.",
    )
    pre_roll_ms: Annotated[StrictInt, Field(ge=0, le=1000)] = Field(
        300,
        description='Audio before the detection kept for a command said in the same breath ("okay nabu, what time is it"), in milliseconds.',
    )
    cue: StrictStr = Field(
        "tone",
        description="Sound played when the wake word is heard: `tone` (two short beeps), `none`, or a path to a 16-bit WAV file.",
    )
    stop_check: Literal["while_active", "always"] = Field(
        "while_active",
        description="Asleep (no wake word), utterances are still transcribed for the safety stop phrase while a skill or background run is active (`while_active`), or always (`always`: for robots whose motion edgevox does not track).",
    )

    @field_validator("model")
    @classmethod
    def _model_exists(cls, value: str | None) -> str | None:
        if value is None or value in EMBEDDED_WAKE_MODELS:
            return value
        embedded = ", ".join(EMBEDDED_WAKE_MODELS)
        path = Path(value)
        if path.suffix not in (".json", ".tflite"):
            close = difflib.get_close_matches(value, EMBEDDED_WAKE_MODELS, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ValueError(
                f"{value!r} is not an embedded wake word model ({embedded}) nor a .json/.tflite file: "
                f"{hint}use one of those names or a path to a microWakeWord model"
            )
        config = path.with_suffix(".json")
        if not path.is_file() or not config.is_file():
            missing = path if not path.is_file() else config
            raise ValueError(f"{value!r}: no such file {str(missing)!r} (embedded models: {embedded})")
        return value

    @field_validator("cue")
    @classmethod
    def _cue_exists(cls, value: str) -> str:
        if value in ("tone", "none"):
            return value
        if not Path(value).is_file():
            raise ValueError(f"{value!r}: no such WAV file; use `tone`, `none` or a path to a WAV file")
        return value
