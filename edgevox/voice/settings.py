"""Voice loop settings (``VoiceSettings``): what the config's ``voice`` section becomes.

Durations carry their unit in the name; every value is checked on construction.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from edgevox.voice.chunker import ChunkerSettings
from edgevox.voice.echo import ECHO_GUARD_MODES
from edgevox.voice.segmenter import SegmenterSettings
from edgevox.voice.stop_phrases import DEFAULT_NEGATIONS, DEFAULT_STOP_PHRASES


@dataclass(frozen=True)
class VoiceSettings:
    """Voice loop settings. Durations carry their unit in the name."""

    segmenter: SegmenterSettings = field(default_factory=SegmenterSettings)
    chunker: ChunkerSettings = field(default_factory=ChunkerSettings)
    echo_guard: str = "half_duplex"
    """``aec`` (:mod:`edgevox.voice.aec`), ``half_duplex``, ``energy_gate`` or ``off`` (see :mod:`edgevox.voice.echo`)."""
    echo_tail_ms: int = 300
    """Half-duplex: the mic still counts as echo this long after playback ends."""
    energy_gate_ratio: float = 2.0
    """Energy gate: a voiced frame counts only if its RMS exceeds this times the playback RMS."""
    energy_gate_window_ms: int = 150
    """Energy gate: the playback reference is the max over +- this window (covers device latency)."""
    barge_in: bool = True
    """Let user speech interrupt the reply (not in half-duplex, where only stop phrases do)."""
    stop_phrases: tuple[str, ...] = DEFAULT_STOP_PHRASES
    stop_negations: tuple[str, ...] = DEFAULT_NEGATIONS
    """Words that, just before a stop phrase, make it no stop (``stop_phrases.NEGATIONS``)."""
    stop_confirmation: str = "Stopped."
    """Spoken (and printed) once after a safety stop; empty = say nothing."""
    vocabulary: tuple[str, ...] = ()
    """Words that bias STT, in addition to the agent's tool names and enum values."""
    speculative_stt: bool = True
    """Transcribe the audio so far at a pause (``segmenter.pause_ms``), before the endpoint fires."""
    speculative_reply: bool = True
    """Also start the agent on that speculative transcript (if it ``supports_speculation``):
    nothing it says or does is released before the endpoint confirms the same text."""
    tts_priority_ms: int = 400
    """While TTS synthesizes this turn's audio and less than this much reply audio is buffered,
    the turn thread pauses the LLM so TTS gets the CPU (0 = never pause)."""
    session_id: str = "default"
    read_timeout_s: float = 0.1
    input_stall_s: float | None = 2.0
    """No audio at all for this long = the stream died: reopen it (None: never)."""
    reopen_backoff_s: tuple[float, ...] = (0.05, 0.2, 0.5, 1.0, 2.0)
    """Waits before successive reopen attempts; the last one repeats."""

    def __post_init__(self) -> None:
        if self.echo_guard not in ECHO_GUARD_MODES:
            raise ValueError(f"voice.echo_guard = {self.echo_guard!r}: must be one of {', '.join(ECHO_GUARD_MODES)}")
        if self.energy_gate_ratio <= 0:
            raise ValueError(f"voice.energy_gate_ratio = {self.energy_gate_ratio}: must be > 0")
        if not self.reopen_backoff_s:
            raise ValueError("voice.reopen_backoff_s: give at least one wait in seconds")
        if self.tts_priority_ms < 0:
            raise ValueError(f"voice.tts_priority_ms = {self.tts_priority_ms}: must be >= 0")
