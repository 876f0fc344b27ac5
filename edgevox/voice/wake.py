"""The wake word gate: which utterances the voice loop listens to.

With no wake word (``wake.model: null``) the loop listens to everything, as it always did.
With one, the loop starts *asleep*:

* Asleep, every frame the capture thread reads also goes to the detector
  (:class:`WakeWordDetector`, e.g. :class:`edgevox.engines.wake_micro.MicroWakeWordDetector`),
  on the capture thread, never in the device callback. Speech is still segmented, but an
  utterance that starts asleep is not a turn: it is dropped untranscribed, or (the safety
  rule below) transcribed for the stop-phrase check only.
* The wake word opens a conversation *window* (``window_s``): :class:`WakeDetected` is
  published, the cue plays, and the utterance that was in progress (the wake word itself) is
  cut; its last ``pre_roll_ms`` become the pre-roll of the next utterance, so a command said
  in the same breath ("okay nabu, what time is it") starts a turn of its own with its first
  syllable kept.
* While awake every utterance is a turn. The window stays open while the user speaks, a turn
  runs or is queued, and the robot speaks, and closes ``window_s`` after the last of these
  (follow-up questions need no wake word); then :class:`WakeWindowClosed` is published and
  the detector is reset.

Safety: the stop phrase never needs the wake word. The robot speaking or a turn running
keeps the loop awake, so the stop check runs as it does without a wake word (half-duplex
echo included); asleep, an utterance is still transcribed for the stop check alone while
anything is registered in the activity registry (a skill from an earlier turn, a background
run) - ``stop_check: always`` does it for every utterance, for robots whose motion edgevox
does not track (the ``StopEvent`` reaches the ROS and Zenoh bridges).

Rejected alternative: transcribing everything and matching the wake phrase in the text
(Whisper on every utterance the room hears, and a text match that "Alexander" passes).
"""

from __future__ import annotations

import time
import wave
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

import numpy as np

from edgevox.errors import ConfigError
from edgevox.runtime.events import Event
from edgevox.voice.events import WakeDetected, WakeWindowClosed

StopCheck = Literal["while_active", "always"]

CUE_HZ = (880.0, 1320.0)
"""The default cue: two short rising beeps (Silero does not hear them as speech)."""


@runtime_checkable
class WakeWordDetector(Protocol):
    """A streaming wake word detector (called by one thread: the capture thread)."""

    name: str
    """The model's name (``okay_nabu``)."""
    phrase: str
    """What to say (``Okay Nabu``)."""
    sample_rate_hz: int
    """Rate of the frames given to :meth:`process`."""

    def process(self, frame: np.ndarray) -> float | None:
        """The detection probability if the wake word ended in these samples, else None."""
        ...

    def reset(self) -> None:
        """Forget the audio heard so far."""
        ...


@dataclass(frozen=True)
class WakeSettings:
    """How the gate behaves (the ``wake`` config section). Durations carry their unit."""

    window_s: float = 8.0
    """The conversation stays open this long after the wake word, the user's last speech or
    the robot's last reply."""
    pre_roll_ms: int = 300
    """Audio before the detection kept for the command that follows in the same breath."""
    stop_check: StopCheck = "while_active"
    """Asleep, transcribe utterances for the stop phrase while something runs, or ``always``."""
    cue: np.ndarray | None = field(default=None, compare=False, repr=False)
    """Played on detection (float32 mono at the output rate); None = silent."""

    def __post_init__(self) -> None:
        if not 0 < self.window_s <= 3600:
            raise ValueError(f"wake.window_s = {self.window_s}: must be > 0 and at most 3600")
        if self.pre_roll_ms < 0:
            raise ValueError(f"wake.pre_roll_ms = {self.pre_roll_ms}: must be >= 0")


@dataclass(frozen=True)
class Wake:
    """What the voice loop needs for a wake word: the detector and its settings."""

    detector: WakeWordDetector
    settings: WakeSettings = field(default_factory=WakeSettings)


class WakeGate:
    """Asleep/awake state of one capture thread (see the module docstring). Not thread-safe:
    the capture thread owns it."""

    def __init__(
        self,
        wake: Wake,
        publish: Callable[[Event], None],
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.detector = wake.detector
        self.settings = wake.settings
        self._publish = publish
        self._clock = clock
        self.awake = False
        self._deadline = 0.0
        self._opened_at = 0.0
        self.cue_until = 0.0
        """Monotonic time until which output playback is the cue (not the robot's echo): the
        capture thread sets it when it plays the cue."""

    def listening(self, now: float, busy: bool) -> bool:
        """Whether an utterance starting now is a turn. ``busy``: the user is in an accepted
        utterance, a turn runs or waits, or the robot speaks; it keeps the window open."""
        if busy:
            if not self.awake:
                self.awake, self._opened_at = True, now
            self._deadline = now + self.settings.window_s
        elif self.awake and now >= self._deadline:
            self.awake = False
            self.detector.reset()
            self._publish(WakeWindowClosed(open_s=round(now - self._opened_at, 3)))
        return self.awake

    def detect(self, frame: np.ndarray, captured_at: float) -> WakeDetected | None:
        """Asleep: feed ``frame`` to the detector; on the wake word open the window and
        publish :class:`WakeDetected` (returned)."""
        probability = self.detector.process(frame)
        if probability is None:
            return None
        now = self._clock()
        self.awake = True
        self._opened_at = now
        self._deadline = now + self.settings.window_s
        event = WakeDetected(
            timestamp=captured_at,
            model=self.detector.name,
            phrase=self.detector.phrase,
            probability=round(float(probability), 3),
            window_s=self.settings.window_s,
        )
        self._publish(event)
        return event

    def checks_stops(self, something_running: bool) -> bool:
        """Whether an utterance starting asleep is transcribed for the stop-phrase check."""
        return self.settings.stop_check == "always" or something_running

    def keep_frames(self, frame_ms: int) -> int:
        """Frames of the wake word's utterance kept as the pre-roll of the command."""
        return -(-self.settings.pre_roll_ms // frame_ms)


def tone_cue(sample_rate_hz: int, *, amplitude: float = 0.25) -> np.ndarray:
    """Two rising 70 ms beeps with 10 ms ramps (~180 ms), float32 mono at ``sample_rate_hz``."""
    parts: list[np.ndarray] = []
    n = int(sample_rate_hz * 0.07)
    t = np.arange(n) / sample_rate_hz
    ramp = np.minimum(1.0, np.minimum(t, t[-1] - t) / 0.01)
    for hz in CUE_HZ:
        parts += [amplitude * ramp * np.sin(2 * np.pi * hz * t), np.zeros(int(sample_rate_hz * 0.04))]
    return np.concatenate(parts).astype(np.float32)


def load_cue(cue: str, sample_rate_hz: int, *, where: str = "wake.cue") -> np.ndarray | None:
    """The cue sound for ``cue`` (``tone``, ``none`` or a WAV path) at ``sample_rate_hz``."""
    if cue == "none":
        return None
    if cue == "tone":
        return tone_cue(sample_rate_hz)
    path = Path(cue)
    try:
        with wave.open(str(path), "rb") as wav:
            width, channels, rate = wav.getsampwidth(), wav.getnchannels(), wav.getframerate()
            raw = wav.readframes(wav.getnframes())
    except (OSError, EOFError, wave.Error) as exc:
        raise ConfigError(f"{where} = {cue!r}: cannot read it as a WAV file ({exc}); give a 16-bit PCM WAV") from exc
    if width != 2:
        raise ConfigError(f"{where} = {cue!r}: {8 * width}-bit samples; give a 16-bit PCM WAV")
    audio = np.frombuffer(raw, dtype="<i2").astype(np.float32) / 32768.0
    audio = audio.reshape(-1, channels).mean(axis=1).astype(np.float32)
    if rate != sample_rate_hz:
        from edgevox.engines.resample import resample

        audio = resample(audio, rate, sample_rate_hz)
    return audio
