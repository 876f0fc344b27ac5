"""Typed events of the voice loop (topics ``voice.*``).

Order within one turn (``turn_id``)::

    SpeechStarted -> SpeechEnded -> TranscriptEvent -> TurnStarted
        -> Token* / Chunk* (interleaved) -> FirstAudio (first sample of the reply left the output)
        -> TurnDone                                           (completed)
    ... or at any point after TurnStarted:
        InterruptEvent (control) + Interrupted -> TurnDone   (barge-in)
        StopEvent (control) + Stopped -> TurnDone            (safety stop phrase)

A turn typed in (``VoiceLoop.submit_text``) starts at ``TranscriptEvent``. An utterance
whose transcript is empty, or a stop phrase, never becomes a turn; its id is simply
not used again. The safety stop and barge-in also publish the runtime control
events :class:`~edgevox.runtime.events.StopEvent` /
:class:`~edgevox.runtime.events.InterruptEvent` (they overtake queued data events),
so skills and background agents can react without knowing about voice.

All times are wall-clock seconds since the epoch (``time.time()``), the same clock
as ``Event.timestamp``; the voice loop stamps ``timestamp`` itself at the moment
the thing happened, not when the bus delivered it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from edgevox.runtime.events import Event


@dataclass(kw_only=True)
class VoiceEvent(Event):
    """Base of the voice events (not published itself)."""

    turn_id: int = 0
    """The turn (utterance or typed text) this event belongs to; 0 = none."""


@dataclass(kw_only=True)
class SpeechStarted(VoiceEvent):
    """The segmenter heard enough voiced frames to start an utterance."""

    kind: ClassVar[str] = "voice.speech_started"
    first_voiced_at: float = 0.0
    """Wall-clock time the first voiced frame of the utterance was captured."""
    during_playback: bool = False
    """True if the robot was speaking when this speech started."""


@dataclass(kw_only=True)
class SpeechEnded(VoiceEvent):
    """End of an utterance (end-of-speech silence, or the maximum length was reached)."""

    kind: ClassVar[str] = "voice.speech_ended"
    last_voiced_at: float = 0.0
    """Wall-clock time the user's last voiced frame ended: the start of perceived latency."""
    duration_s: float = 0.0
    """Length of the audio handed to STT, pre-roll included."""
    truncated: bool = False
    """True if cut at ``max_utterance_s`` while the user was still speaking."""
    ignored: bool = False
    """True if the echo guard let it through only for the stop-phrase check (half-duplex)."""


@dataclass(kw_only=True)
class TranscriptEvent(VoiceEvent):
    """STT result (or typed text). ``stop_phrase`` is set when it matched a safety stop phrase."""

    kind: ClassVar[str] = "voice.transcript"
    text: str = ""
    origin: str = "voice"
    """``"voice"`` (transcribed), ``"text"`` (submitted with ``submit_text``) or the channel
    ``submit_text`` was given (``"ros2"``, ``"ros1"`` for a bridge's text input)."""
    stt_s: float = 0.0
    """Seconds spent transcribing (0 for typed text)."""
    stop_phrase: str = ""
    speculative: bool = False
    """True if STT ran on the audio up to a pause, before the endpoint fired (the endpoint then
    confirmed that nothing voiced followed), so ``stt_s`` was spent while the user was silent."""


@dataclass(kw_only=True)
class SpeculativeReply(VoiceEvent):
    """The agent was started on a speculative transcript before the endpoint (``state=
    "started"``), and later released with it (``"committed"``: the final transcript was the
    same text) or dropped (``"discarded"``: the user went on or said something else, or a
    stop came). Diagnostic only: nothing of a speculative reply is published, spoken or acted
    on before ``"committed"``."""

    kind: ClassVar[str] = "voice.speculative_reply"
    text: str = ""
    state: str = "started"


@dataclass(kw_only=True)
class TurnStarted(VoiceEvent):
    """The agent starts working on a user message."""

    kind: ClassVar[str] = "voice.turn_started"
    text: str = ""


@dataclass(kw_only=True)
class Token(VoiceEvent):
    """A text delta streamed from the agent."""

    kind: ClassVar[str] = "voice.token"
    stream: ClassVar[bool] = True
    text: str = ""


@dataclass(kw_only=True)
class Chunk(VoiceEvent):
    """A piece of the reply released by the chunker for synthesis."""

    kind: ClassVar[str] = "voice.chunk"
    index: int = 0
    """0 for the first chunk of the turn."""
    text: str = ""
    """The raw reply text of the chunk (what history records)."""
    spoken_text: str = ""
    """The text after cleaning for speech (what TTS reads)."""


@dataclass(kw_only=True)
class ChunkSynthesized(VoiceEvent):
    """TTS finished a chunk and all its audio was handed to the output (TTS thread)."""

    kind: ClassVar[str] = "voice.chunk_synthesized"
    index: int = 0
    samples: int = 0
    """Output samples written for the chunk."""
    synth_s: float = 0.0
    """Seconds spent in TTS for the chunk."""


@dataclass(kw_only=True)
class FirstAudio(VoiceEvent):
    """The first sample of the turn's reply left the output (published once per turn)."""

    kind: ClassVar[str] = "voice.audio_out"
    written_at: float = 0.0
    """Wall-clock time the first samples were handed to ``AudioOut.write``."""
    sample_rate_hz: int = 0


@dataclass(kw_only=True)
class Interrupted(VoiceEvent):
    """Barge-in: the user spoke over the reply; audio was cleared and generation cancelled."""

    kind: ClassVar[str] = "voice.interrupted"
    spoken_text: str = ""
    """The part of the reply that was fully played (the only part kept in history)."""
    dropped_samples: int = 0
    """Samples cleared from the output unplayed."""
    audio_stop_s: float = 0.0
    """Seconds from the first voiced frame of the user's speech to ``AudioOut.clear()``."""


@dataclass(kw_only=True)
class Stopped(VoiceEvent):
    """The safety stop ran: speech, generation and skills were cancelled."""

    kind: ClassVar[str] = "voice.stopped"
    phrase: str = ""
    """The stop phrase heard; empty for a stop that was not spoken (a StopEvent, a button)."""
    text: str = ""
    """The transcript that matched (or the text a non-spoken stop carried)."""
    reason: str = ""
    """Why: ``stop phrase 'stop'``, or the reason a StopEvent / ``safety_stop()`` gave."""
    cancel_s: float = 0.0
    """Seconds from the transcript to every cancellation having been issued."""
    cancelled_turns: list[int] | None = None
    """Turn ids cancelled (the running turn and any queued ones)."""
    cancelled: list[str] | None = None
    """Everything else that was running and got the cancel: ``"skill go_to"``, ``"tool move"``,
    ``"generation home_robot"``, ``"background patrol"``, ``"worker ..."``."""
    ignored: list[str] | None = None
    """What was still running 100 ms after the cancel (it ignores cancellation; its late result
    is discarded and it is reported again at shutdown if it still runs)."""


@dataclass(kw_only=True)
class TurnDone(VoiceEvent):
    """A turn ended. ``status``: completed, interrupted, stopped, error or cancelled (loop stopping)."""

    kind: ClassVar[str] = "voice.turn_done"
    status: str = "completed"
    reply_text: str = ""
    """What the agent generated (possibly cut short)."""
    spoken_text: str = ""
    """What was actually played to the end, chunk by chunk."""
    error: str = ""


@dataclass(kw_only=True)
class AudioDevice(VoiceEvent):
    """The input stream failed and was reopened (or could not be). ``state``: lost, reopened, failed."""

    kind: ClassVar[str] = "voice.audio_device"
    state: str = ""
    error: str = ""
    attempt: int = 0


@dataclass(kw_only=True)
class CaptureFailed(VoiceEvent):
    """The capture thread died (an exception in the VAD, the wake word detector, the segmenter):
    nothing more is heard, the stop phrase included. The loop has already run the safety stop;
    the application should stop and exit with an error (``edgevox run`` does)."""

    kind: ClassVar[str] = "voice.capture_failed"
    error: str = ""
    """One line: what died and why."""


@dataclass(kw_only=True)
class InputEnded(VoiceEvent):
    """A finite input (a WAV file) is exhausted; the loop keeps processing what it queued."""

    kind: ClassVar[str] = "voice.input_ended"


@dataclass(kw_only=True)
class WakeDetected(VoiceEvent):
    """The wake word was heard (``wake.model`` set): the conversation window opens for ``window_s``.

    Followed by the command's ``SpeechStarted`` (same breath or later), and eventually by
    :class:`WakeWindowClosed`. ``timestamp`` is when the frame that completed it was captured."""

    kind: ClassVar[str] = "voice.wake_detected"
    model: str = ""
    """The detector's model (``okay_nabu``)."""
    phrase: str = ""
    """Its wake phrase (``Okay Nabu``)."""
    probability: float = 0.0
    """The smoothed detection probability (above the threshold)."""
    window_s: float = 0.0
    """How long the window stays open after the last speech, turn or reply, in seconds."""


@dataclass(kw_only=True)
class WakeWindowClosed(VoiceEvent):
    """The conversation window closed (``window_s`` with no speech, turn or reply): asleep
    again, only the wake word (or a stop phrase) is listened for."""

    kind: ClassVar[str] = "voice.wake_window_closed"
    open_s: float = 0.0
    """How long the window was open, in seconds."""


@dataclass(kw_only=True)
class EchoDelayMeasured(VoiceEvent):
    """How late the microphone hears the robot's own output was measured, or changed (a sound
    server raised its latency): the echo guard follows it (:mod:`edgevox.voice.echo`)."""

    kind: ClassVar[str] = "voice.echo_delay"
    delay_ms: float = 0.0
    """Output taken by the device -> heard by the microphone, in milliseconds."""
    correlation: float = 0.0
    """How well the microphone's levels matched the output's at that delay (0-1)."""
