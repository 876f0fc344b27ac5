"""Cut a stream of VAD-classified frames into utterances.

The segmenter is pure logic (no threads, no engines): the capture thread splits
audio into frames (:class:`FrameSplitter`), asks the VAD about each frame, and
feeds ``(frame, voiced, end_time)`` to :meth:`Segmenter.process`, which returns
at most one event per frame: :class:`SegmentStart`, :class:`SegmentPause`,
:class:`SegmentResume` or :class:`SegmentEnd`. In one utterance they come as
``Start (Pause Resume)* Pause? End``: a Resume only follows a Pause, and a Pause
whose silence run goes on is followed by the End.

Rules (all durations from :class:`SegmenterSettings`):

* An utterance starts after ``min_speech_ms`` of *consecutive* voiced frames, so
  a click or a cough shorter than that never starts one (nor a barge-in).
  ``pre_roll_ms`` of audio before the start is kept, so Whisper hears the onset.
* It ends after ``end_silence_ms`` of consecutive unvoiced frames, or when it
  reaches ``max_utterance_s`` (``truncated=True``); speech that goes on past the
  cut starts a new utterance after ``min_speech_ms`` more voiced frames.
* ``SegmentEnd.last_voiced_at`` is the capture time of the end of the last voiced
  frame: latency is measured from there, so the endpointing silence counts.
* Speculation: after ``pause_ms`` of silence (less than ``end_silence_ms``) a
  :class:`SegmentPause` hands out the audio so far, once per silence run, so STT can
  start before the endpoint fires. If the silence run goes on to end the utterance,
  ``SegmentEnd.pause_samples`` says how many samples that pause's audio had: nothing
  voiced was heard after it, so its transcript stands for the whole utterance. Speech
  that resumes makes the pause stale (the next ``SegmentEnd`` has ``pause_samples=0``
  unless a later pause covers its final silence). The first voiced frame after a
  pause returns :class:`SegmentResume` (speculative work on that pause is stale),
  unless the same frame reaches ``max_utterance_s``: then the End wins.
* Adaptive endpointing (``hold_silence_ms`` > 0): the silence that ends an
  utterance depends on what was said. Another thread (the loop's STT thread)
  transcribes each pause's audio and calls :meth:`Segmenter.hint` with whether it
  reads complete (:func:`edgevox.voice.endpoint.ends_mid_phrase`). The utterance
  ends after ``end_silence_ms`` once *this* silence run's pause is hinted complete,
  else (hinted incomplete, "turn left and", "five five", "um"; or no hint yet)
  after ``hold_silence_ms``. A hint names its pause by its audio length, so a hint
  for a pause that speech already made stale is ignored. The hint is one attribute
  read by the capture thread per frame: no lock, never a wait. Without hints (the
  loop with speculative STT off) the loop passes ``hold_silence_ms=0``, else every
  turn would end after the long silence.

Figures (``edgevox eval endpoint``, ../shared/speech: 71 speech clips, 3 without speech, 4
built hard cases; whisper-tiny.en on each pause, hint assumed at once; webrtcvad+Silero VAD;
clips split / hard cases split / endpoint delay p50/p95/max ms):

==========================  =====  ====  ===============
fixed 300 (before)          15     4/4   300 / 300 / 300
fixed 250                   16     4/4   260 / 260 / 260
adaptive 250/800            15     3/4   260 / 260 / 800
adaptive 250/500/800        6      3/4   260 / 500 / 800
adaptive 250/650/800        5      2/4   260 / 660 / 800  (the default)
==========================  =====  ====  ===============

(The middle figure is ``statement_silence_ms``.) With only the request/mid-phrase rule, every
split left was read speech cut at a sentence or comma pause, whose partial transcript Whisper
ends with a period ("Printing." for "Printing,"): a finished *statement* looks complete. Telling
it apart from a request (:func:`edgevox.voice.endpoint.is_request`) and waiting 650 ms for it
keeps 10 of those 15 clips whole; what still splits is JFK's oratorical pauses, a few pauses in
LibriSpeech/LJSpeech longer than 650 ms, and Silero's dips between words. Command clips: 0
splits; the digit string "five five" (450 ms apart) is one utterance only with adaptive
endpointing. With webrtcvad alone (no Silero) the default splits 4 clips and 0/4 hard cases,
but it hears the noise-only clips as speech. Trade-off: a request still ends after 250 ms; a
statement waits 650 ms and one that stops mid-phrase ("five five", "the red one") 800 ms -
the speculative reply runs during the wait, so most of that is not added to the reply.

Rejected alternative: a ratio of voiced frames in a sliding window (as some
pipelines do) starts faster on broken speech but fires on steady noise that the
VAD flags intermittently; consecutive frames are easier to reason about.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

VALID_FRAME_MS = (10, 20, 30)


@dataclass(frozen=True)
class SegmenterSettings:
    """Endpointing parameters. All lengths are in milliseconds unless named ``_s``."""

    frame_ms: int = 20
    """VAD frame length: 10, 20 or 30 (webrtcvad accepts only these)."""
    pre_roll_ms: int = 300
    """Audio kept from before the detected start of speech."""
    min_speech_ms: int = 100
    """Consecutive voiced audio needed to start an utterance (and to trigger barge-in)."""
    end_silence_ms: int = 300
    """Consecutive unvoiced audio that ends an utterance; with adaptive endpointing
    (``hold_silence_ms`` > 0), only once the pause's transcript was hinted complete."""
    hold_silence_ms: int = 0
    """Adaptive endpointing: the silence that ends an utterance while the current pause has
    no hint yet or was hinted incomplete (:meth:`Segmenter.hint`). 0 = off (every end after
    ``end_silence_ms``). Needs pauses (``pause_ms`` below ``end_silence_ms``) and someone to
    hint them: the voice loop passes 0 when speculative STT is off, else every turn would
    wait this long."""
    statement_silence_ms: int = 0
    """Adaptive endpointing: the silence that ends an utterance whose pause was hinted a
    complete *statement* (not a request or question); 0 = ``end_silence_ms``. Clamped to
    ``end_silence_ms``..``hold_silence_ms``."""
    max_utterance_s: float = 15.0
    """Longest utterance handed to STT; longer speech is cut and continues in a new one."""
    pause_ms: int = 60
    """Silence after which the audio so far is offered for speculative transcription
    (:class:`SegmentPause`); 0 = never. Only used when smaller than ``end_silence_ms``.
    Every millisecond here is on the critical path (STT starts after it); shorter pauses
    also occur inside words. With webrtcvad (aggressiveness 2) on ../shared/speech, 60 ms
    gave 1.23 speculations per utterance (100 ms: 1.17), and a stale speculation delayed
    the final transcript in 3 of 91 utterances (100 ms: 2)."""

    def __post_init__(self) -> None:
        if self.frame_ms not in VALID_FRAME_MS:
            raise ValueError(f"segmenter.frame_ms = {self.frame_ms}: must be one of 10, 20, 30")
        for name in (
            "pre_roll_ms",
            "min_speech_ms",
            "end_silence_ms",
            "pause_ms",
            "hold_silence_ms",
            "statement_silence_ms",
        ):
            value = getattr(self, name)
            if value < 0:
                raise ValueError(f"segmenter.{name} = {value}: must be >= 0")
        if self.end_silence_ms < self.frame_ms:
            raise ValueError(f"segmenter.end_silence_ms = {self.end_silence_ms}: must be >= frame_ms ({self.frame_ms})")
        if self.hold_silence_ms and self.hold_silence_ms < self.end_silence_ms:
            raise ValueError(
                f"segmenter.hold_silence_ms = {self.hold_silence_ms}: must be 0 (off) or >= end_silence_ms "
                f"({self.end_silence_ms})"
            )
        if self.max_utterance_s * 1000 < self.min_speech_ms + self.frame_ms:
            raise ValueError(f"segmenter.max_utterance_s = {self.max_utterance_s}: must exceed min_speech_ms")

    def frames(self, ms: float) -> int:
        """Whole frames needed to cover ``ms`` milliseconds (at least 1 for ms > 0)."""
        if ms <= 0:
            return 0
        return max(1, int(np.ceil(ms / self.frame_ms - 1e-9)))


@dataclass
class SegmentStart:
    first_voiced_at: float
    """Capture time of the start of the first voiced frame of the run that started the utterance."""


@dataclass
class SegmentPause:
    """``pause_ms`` of silence inside an utterance: the audio so far, for speculative STT."""

    audio: np.ndarray
    """The utterance up to now (pre-roll and the pause's silence included), float32 mono."""
    last_voiced_at: float


@dataclass
class SegmentResume:
    """Speech resumed after a :class:`SegmentPause` of the same utterance: that pause's
    audio (and any transcript of it) no longer stands for the utterance."""

    pause_samples: int
    """Length of the now stale :class:`SegmentPause` audio (as passed to :meth:`Segmenter.hint`)."""
    resumed_at: float
    """Capture time of the end of the voiced frame that resumed the speech."""


@dataclass
class SegmentEnd:
    audio: np.ndarray
    """The utterance (pre-roll included), float32 mono."""
    last_voiced_at: float
    truncated: bool = False
    pause_samples: int = 0
    """Length of the :class:`SegmentPause` audio of this utterance's final silence run (0: none).
    Everything after those samples is silence, so a transcript of that audio is the utterance's."""


class FrameSplitter:
    """Re-blocks arbitrary audio blocks into exact frames of ``frame_samples``.

    ``push(block, end_time)`` returns ``[(frame, frame_end_time), ...]``; a block's
    samples are assumed to end at ``end_time`` (the moment it was read), so each
    frame's end time is back-dated by the samples that follow it.
    """

    def __init__(self, frame_samples: int, sample_rate_hz: int) -> None:
        if frame_samples <= 0:
            raise ValueError(f"frame_samples = {frame_samples}: must be > 0")
        self.frame_samples = frame_samples
        self.sample_rate_hz = sample_rate_hz
        self._pending = np.zeros(0, dtype=np.float32)

    def push(self, block: np.ndarray, end_time: float) -> list[tuple[np.ndarray, float]]:
        data = np.asarray(block, dtype=np.float32).reshape(-1)
        buf = np.concatenate([self._pending, data]) if self._pending.size else data
        n = buf.shape[0] // self.frame_samples
        frames: list[tuple[np.ndarray, float]] = []
        total = buf.shape[0]
        for i in range(n):
            end = (i + 1) * self.frame_samples
            frames.append((buf[i * self.frame_samples : end], end_time - (total - end) / self.sample_rate_hz))
        self._pending = buf[n * self.frame_samples :].copy()
        return frames

    def reset(self) -> None:
        self._pending = np.zeros(0, dtype=np.float32)


class Segmenter:
    """Turns voiced/unvoiced frames into utterances. Not thread-safe: one capture thread owns it."""

    def __init__(self, settings: SegmenterSettings, sample_rate_hz: int) -> None:
        self.settings = settings
        self.sample_rate_hz = sample_rate_hz
        self.frame_samples = sample_rate_hz * settings.frame_ms // 1000
        self._pre_roll_frames = settings.frames(settings.pre_roll_ms)
        self._min_speech_frames = max(1, settings.frames(settings.min_speech_ms))
        self._end_silence_frames = settings.frames(settings.end_silence_ms)
        pause_frames = settings.frames(settings.pause_ms)
        self._pause_frames = pause_frames if 0 < pause_frames < self._end_silence_frames else 0
        # Without pauses nothing can be hinted: adaptive endpointing would only ever hold.
        self._hold_frames = settings.frames(settings.hold_silence_ms) if self._pause_frames else 0
        statement = settings.frames(settings.statement_silence_ms) or self._end_silence_frames
        self._statement_frames = min(max(statement, self._end_silence_frames), self._hold_frames or statement)
        self._hint: tuple[int, bool, int] | None = None
        self._max_frames = int(settings.max_utterance_s * 1000 // settings.frame_ms)
        self.reset()

    def reset(self) -> None:
        """Forget any utterance in progress (after a device reopen)."""
        # Pre-roll ring holds the frames before a start, including the voiced run itself.
        self._ring: deque[np.ndarray] = deque(maxlen=self._pre_roll_frames + self._min_speech_frames)
        self._voiced_run = 0
        self._run_started_at = 0.0
        self._in_speech = False
        self._frames: list[np.ndarray] = []
        self._silence_run = 0
        self._last_voiced_at = 0.0
        self._pause_samples = 0
        self._hint = None

    def cut(self, keep_frames: int) -> None:
        """Drop the utterance in progress unreported (a wake word just ended in it): its last
        ``keep_frames`` frames become the pre-roll of the next start, so a command said in the
        same breath starts a new utterance with its onset kept."""
        recent = (self._frames if self._in_speech else list(self._ring))[-keep_frames:] if keep_frames > 0 else []
        self.reset()
        self._ring.extend(recent)

    def hint(self, pause_samples: int, complete: bool, *, statement: bool = False) -> None:
        """Any thread (the STT thread): the transcript of the :class:`SegmentPause` whose audio
        had ``pause_samples`` samples reads complete (end after ``end_silence_ms``) or not (hold
        for ``hold_silence_ms``). A hint for any other pause (stale: speech resumed, or the
        utterance ended) is ignored by :meth:`process`.

        ``statement`` (with ``complete``): the text is a finished *statement* ("He paced up and
        down, waiting.") rather than a request, a question or a short answer; people telling
        something go on after a sentence more often than people asking, so it ends after
        ``statement_silence_ms`` (between ``end_silence_ms`` and ``hold_silence_ms``).

        One attribute assignment, atomic under the GIL; the capture thread reads it per frame.
        """
        frames = self._statement_frames if statement else self._end_silence_frames
        self._hint = (int(pause_samples), bool(complete), frames)

    @property
    def in_speech(self) -> bool:
        return self._in_speech

    def process(
        self, frame: np.ndarray, voiced: bool, end_time: float
    ) -> SegmentStart | SegmentPause | SegmentResume | SegmentEnd | None:
        """Feed one frame (exactly ``frame_samples`` long) that ended at ``end_time``.

        Returns at most one event. When a voiced frame both resumes after a pause and reaches
        ``max_utterance_s``, the :class:`SegmentEnd` wins (the pause is then simply not
        ``pause_samples`` of the end, which says the same thing)."""
        if frame.shape[0] != self.frame_samples:
            raise ValueError(f"frame has {frame.shape[0]} samples; expected {self.frame_samples}")
        frame_s = self.settings.frame_ms / 1000
        if not self._in_speech:
            self._ring.append(frame)
            if not voiced:
                self._voiced_run = 0
                return None
            if self._voiced_run == 0:
                self._run_started_at = end_time - frame_s
            self._voiced_run += 1
            if self._voiced_run < self._min_speech_frames:
                return None
            self._in_speech = True
            self._frames = list(self._ring)
            self._ring.clear()
            self._silence_run = 0
            self._pause_samples = 0
            self._hint = None
            self._last_voiced_at = end_time
            self._voiced_run = 0
            return SegmentStart(first_voiced_at=self._run_started_at)

        self._frames.append(frame)
        resume: SegmentResume | None = None
        if voiced:
            if self._pause_samples:  # speech resumed: an earlier pause's audio is stale
                resume = SegmentResume(pause_samples=self._pause_samples, resumed_at=end_time)
            self._silence_run = 0
            self._pause_samples = 0
            self._last_voiced_at = end_time
        else:
            self._silence_run += 1
        if self._silence_run and self._silence_run >= self._silence_needed():
            return self._end(truncated=False)
        if len(self._frames) >= self._max_frames:
            return self._end(truncated=voiced or self._silence_run == 0)
        if resume is not None:
            return resume
        if self._pause_frames and self._silence_run == self._pause_frames:
            audio = np.concatenate(self._frames).astype(np.float32, copy=False)
            self._pause_samples = audio.shape[0]
            return SegmentPause(audio=audio, last_voiced_at=self._last_voiced_at)
        return None

    def _silence_needed(self) -> int:
        """Frames of silence that end the utterance now (short once this pause is hinted complete)."""
        if not self._hold_frames:
            return self._end_silence_frames
        hint = self._hint  # one read: the STT thread may replace it at any time
        if hint is not None and self._pause_samples and hint[:2] == (self._pause_samples, True):
            return hint[2]
        return self._hold_frames

    def flush(self) -> SegmentEnd | None:
        """End the utterance in progress, if any (the input ended mid-speech)."""
        if not self._in_speech:
            return None
        return self._end(truncated=self._silence_run == 0)

    def _end(self, truncated: bool) -> SegmentEnd:
        audio = np.concatenate(self._frames).astype(np.float32, copy=False)
        pause = self._pause_samples if self._silence_run > 0 else 0
        end = SegmentEnd(audio=audio, last_voiced_at=self._last_voiced_at, truncated=truncated, pause_samples=pause)
        self._in_speech = False
        self._pause_samples = 0
        self._hint = None
        self._frames = []
        self._silence_run = 0
        self._ring.clear()
        return end
