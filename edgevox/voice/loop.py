"""The voice loop: microphone -> VAD -> STT -> agent -> chunker -> TTS -> speaker, with barge-in and a safety stop.

Threads (all named, all joined by :meth:`VoiceLoop.stop`)::

    edgevox-voice-capture   AudioIn.read -> resample -> frames -> VAD -> Segmenter
                            (speech start may barge in; utterances go to the STT queue,
                            a pause in speech offers the audio so far for speculative STT)
    edgevox-voice-stt       STT.transcribe -> stop-phrase check -> turn queue
    edgevox-voice-turn      agent.stream(text, ctx) -> Chunker -> Speaker.say, one turn at a time
    edgevox-voice-tts       (Speaker) TTS.synthesize -> AudioOut.write
    edgevox-voice-playback  (Speaker) watches played_samples: FirstAudio, end of playback

The device callback lives inside the AudioIn adapter and only copies frames into a
queue; nothing here runs on it. Queues between threads are unbounded deques:
speech that arrives while a turn is running waits for its turn and is never
dropped (the only things ever discarded are a cancelled turn's own chunks).

Turns: every utterance (at speech start) or typed text gets the next ``turn_id``;
a turn's :class:`~edgevox.runtime.context.AgentContext` carries it and a
cancel token that is a child of the loop's root token.

Barge-in (capture thread, at ``SpeechStarted`` while the reply is audible, echo
guard ``energy_gate`` or ``off``): :meth:`Speaker.halt` clears the output and
drops the turn's queued chunks, the turn token is cancelled (generation stops
between tokens), :class:`InterruptEvent` + :class:`Interrupted` are published,
and the agent's history keeps only the chunks that fully played
(``truncate_reply``). The user's utterance then becomes the next turn.

Safety stop (STT thread, or the caller of :meth:`submit_text`): every transcript
is matched against the stop phrases *before* any agent sees it and without
waiting for the turn worker (it never takes a turn lock). A match halts the
audio, cancels the running turn's token and every queued turn, cancels *everything*
registered in :attr:`VoiceLoop.activities` (the runtime's
:class:`~edgevox.runtime.activities.ActivityRegistry`: skills started by earlier turns,
tool calls, generations, background runs, orchestration workers), publishes
:class:`StopEvent` (control: overtakes queued data; the runtime, ROS and Zenoh bridges
act on it), waits up to 100 ms for the cancelled work to end, publishes
:class:`Stopped` listing what was cancelled and what ignored the cancel, and queues the
spoken confirmation (``stop_confirmation``, "Stopped.") once. A stop published on the
bus by anyone else (``App`` forwards it) runs the same path.

Speculative STT (``VoiceSettings.speculative_stt``): when the segmenter reports
a pause (``SegmenterSettings.pause_ms`` of silence, shorter than the endpoint's
``end_silence_ms``), the STT thread transcribes the audio so far while the
endpoint is still waiting. If the utterance then ends without another voiced
frame (``SegmentEnd.pause_samples`` equals the speculated length) and the
vocabulary is the same, that transcript is used at once
(``TranscriptEvent.speculative``); otherwise it is discarded and the final audio
is transcribed. Final utterances always go before a pending speculation.

Adaptive endpoint: the speculative transcript also hints the segmenter
(:meth:`Segmenter.hint`): a complete request ends after ``end_silence_ms``, a
complete statement after ``statement_silence_ms``, text that stops mid-phrase is
held for ``hold_silence_ms`` (:mod:`edgevox.voice.endpoint`).

Speculative replies (``VoiceSettings.speculative_reply``, agents with
``supports_speculation``): the agent also starts on the speculative transcript, in
a context carrying a :class:`~edgevox.runtime.speculation.Speculation`. What the
turn publishes or would say is held, and tools, skills and memory writes wait; the
final transcript commits it (same text: everything held is released in order) or
discards it (cancelled, nothing seen). The stop check runs on confirmed
transcripts only; a stop phrase, echo or unspeakable text is never guessed on.

TTS priority (``VoiceSettings.tts_priority_ms``): on a 2-core CPU the LLM and
Piper slow each other down ~3x. While TTS is synthesizing this turn's audio and
less than ``tts_priority_ms`` of reply audio is buffered ahead of playback (always
the case for the first chunk), the turn thread stops pulling tokens from the
agent, so the LLM is idle and TTS gets the cores; generation resumes as soon as
the chunk is written.

Echo guard: see :mod:`edgevox.voice.echo`.

Device loss: ``AudioIn.read`` raising :class:`AudioDeviceError`, or no audio for
``input_stall_s``, makes the capture thread publish ``AudioDevice(state="lost")``,
stop and restart the input with back-off, and publish ``reopened`` (or
``failed`` per attempt) - it keeps trying until it succeeds or the loop stops.
"""

from __future__ import annotations

import dataclasses
import itertools
import threading
import time
import traceback
from collections import deque
from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from edgevox.engines.base import STT, TTS, VAD, AudioIn, AudioOut
from edgevox.engines.resample import Resampler
from edgevox.errors import AudioDeviceError, Cancelled, LifecycleError
from edgevox.runtime.activities import SAFETY_STOP_REASON, STOP_GRACE_S, ActivityRegistry, CancelReport
from edgevox.runtime.context import AgentContext, CancelToken
from edgevox.runtime.events import ErrorEvent, Event, InterruptEvent, StopEvent
from edgevox.runtime.lifecycle import SharedStop
from edgevox.runtime.limits import wait_s
from edgevox.runtime.speculation import DISCARD_REASON, Speculation
from edgevox.voice.chunker import Chunker, ChunkerSettings
from edgevox.voice.echo import ECHO_GUARD_MODES, rms
from edgevox.voice.endpoint import classify_ending
from edgevox.voice.events import (
    AudioDevice,
    Chunk,
    InputEnded,
    Interrupted,
    SpeculativeReply,
    SpeechEnded,
    SpeechStarted,
    Stopped,
    Token,
    TranscriptEvent,
    TurnDone,
    TurnStarted,
)
from edgevox.voice.segmenter import (
    FrameSplitter,
    SegmentEnd,
    Segmenter,
    SegmenterSettings,
    SegmentPause,
    SegmentResume,
    SegmentStart,
)
from edgevox.voice.speaker import Speaker, TurnAudio
from edgevox.voice.speechtext import clean_for_speech
from edgevox.voice.stopwords import DEFAULT_STOP_PHRASES, StopPhraseMatcher
from edgevox.voice.vocabulary import vocabulary_for

STOP_REASON = SAFETY_STOP_REASON
BARGE_IN_REASON = "barge-in"
SHUTDOWN_REASON = "voice loop stopping"
CONFIRM_AGAIN_AFTER_S = 2.0
"""A stop that finds nothing running within this long of the last confirmation is not confirmed again."""


def _speakable(text: str) -> bool:
    """Whether ``text`` has anything a voice could say. Only a bounded head is cleaned: the
    check runs on the caller's thread (the stdin reader, the STT thread) before queueing."""
    return bool(clean_for_speech(text[:500]))


class Agent(Protocol):
    """What the loop drives: text deltas for a user message (``truncate_reply`` is optional)."""

    def stream(self, task: str, ctx: AgentContext) -> Iterator[str]: ...


@dataclass(frozen=True)
class VoiceSettings:
    """Voice loop settings. Durations carry their unit in the name."""

    segmenter: SegmenterSettings = field(default_factory=SegmenterSettings)
    chunker: ChunkerSettings = field(default_factory=ChunkerSettings)
    echo_guard: str = "half_duplex"
    """``half_duplex``, ``energy_gate`` or ``off`` (see :mod:`edgevox.voice.echo`)."""
    echo_tail_ms: int = 300
    """Half-duplex: the mic still counts as echo this long after playback ends."""
    energy_gate_ratio: float = 2.0
    """Energy gate: a voiced frame counts only if its RMS exceeds this times the playback RMS."""
    energy_gate_window_ms: int = 150
    """Energy gate: the playback reference is the max over +- this window (covers device latency)."""
    barge_in: bool = True
    """Let user speech interrupt the reply (not in half-duplex, where only stop phrases do)."""
    stop_phrases: tuple[str, ...] = DEFAULT_STOP_PHRASES
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


@dataclass
class StopReport:
    """What :meth:`VoiceLoop.stop` left behind. ``clean`` is True when every thread finished."""

    abandoned_threads: list[str] = field(default_factory=list)
    cancelled_turns: list[int] = field(default_factory=list)
    """Turns running or queued when the loop stopped (each also got ``TurnDone(status="cancelled")``)."""
    dropped_utterances: int = 0
    """Utterances not yet transcribed when the loop stopped."""

    @property
    def clean(self) -> bool:
        return not self.abandoned_threads


@dataclass
class _Utterance:
    turn_id: int
    audio: np.ndarray
    echo: bool
    pause_samples: int = 0
    """Final utterance: samples of the pause whose speculative transcript may stand for it.
    Speculative job: always 0."""


@dataclass
class _Speculation:
    """A finished speculative transcription (STT thread only, under the loop lock)."""

    turn_id: int
    samples: int
    vocabulary: tuple[str, ...]
    text: str
    stt_s: float


@dataclass
class _TurnRequest:
    turn_id: int
    text: str
    say: bool = False  # speak ``text`` as it is (an announcement), without the agent
    ctx: AgentContext | None = None
    """Made in advance for a speculative turn (its token is the speculation's)."""
    speculation: Speculation | None = None
    """Set for a turn started on a speculative transcript: held until committed."""
    samples: int = 0
    """Speculative turn: length of the pause audio its transcript came from."""

    def run_or_hold(self, action: Any) -> None:
        """Run ``action`` now, or hold it until this speculative turn is committed."""
        if self.speculation is None:
            action()
        else:
            self.speculation.hold(action)


class VoiceLoop:
    """Runs a voice conversation over the given engines (see the module docstring)."""

    def __init__(
        self,
        bus: Any,
        vad: VAD,
        stt: STT,
        agent: Agent,
        tts: TTS,
        audio_in: AudioIn,
        audio_out: AudioOut,
        settings: VoiceSettings | None = None,
        *,
        context: AgentContext | None = None,
        name: str = "voice",
    ) -> None:
        self.bus = bus
        self.vad = vad
        self.stt = stt
        self.agent = agent
        self.tts = tts
        self.audio_in = audio_in
        self.audio_out = audio_out
        self.settings = settings or VoiceSettings()
        self.name = name
        seg = self.settings.segmenter
        if vad.frame_ms != seg.frame_ms:
            raise ValueError(f"VAD frame_ms = {vad.frame_ms} but segmenter.frame_ms = {seg.frame_ms}: set them equal")
        if stt.sample_rate_hz != vad.sample_rate_hz:
            raise ValueError(f"STT rate {stt.sample_rate_hz} Hz differs from VAD rate {vad.sample_rate_hz} Hz")
        self.session_id = self.settings.session_id
        base = context or AgentContext(bus=bus, session_id=self.session_id)
        self._base_context = base
        self.activities: ActivityRegistry = base.activities if base.activities is not None else ActivityRegistry(name)
        """Where turns, generations, tools and skills register; the safety stop cancels all of it
        (the runtime's registry when the loop runs in an App, else the loop's own)."""
        self.matcher = StopPhraseMatcher(self.settings.stop_phrases)
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._utterances: deque[_Utterance] = deque()
        self._spec_job: _Utterance | None = None
        """The latest pause's audio, waiting for speculative STT (final utterances go first)."""
        self._spec_result: _Speculation | None = None
        self._turns: deque[_TurnRequest] = deque()
        self._spec_turn: _TurnRequest | None = None
        """The undecided speculative turn (queued or running), if any."""
        self.speculative_turns = {"started": 0, "committed": 0, "discarded": 0}
        self._current: tuple[_TurnRequest, AgentContext, TurnAudio] | None = None
        self._stt_busy = False
        self._stopping = threading.Event()
        self._stops: SharedStop[StopReport] = SharedStop(self._still_running)
        self._stopped_once = False
        self._stop_lock = threading.Lock()
        self._confirmed_at = -1e9
        self._input_done = threading.Event()
        self._state = "new"
        self._threads: list[threading.Thread] = []
        self._root: CancelToken | None = None
        self.speaker = Speaker(tts, audio_out, self._publish, session_id=self.session_id, on_error=self._report_error)
        self.device_reopens = 0
        self._segmenter: Segmenter | None = None
        self._capture_turn_id = 0
        """The utterance being captured (0: none); hints for other utterances are stale."""

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        """Open the devices and start the threads; returns at once. Raises if a device cannot open."""
        if self._state != "new":
            raise LifecycleError(f"VoiceLoop.start(): the loop is {self._state}; create a new VoiceLoop to start again")
        # The loop's own context: its token (the root of every turn's token) is a child of the
        # caller's, so cancelling the caller's context stops the loop's turns, and stop() never
        # cancels the caller's token.
        self._loop_context = self._base_context.child(session_id=self.session_id, activities=self.activities)
        self._root = self._loop_context.cancel_token
        self.audio_out.start()
        try:
            self.audio_in.start()
        except BaseException:
            self.audio_out.stop()
            raise
        self._state = "running"
        self.speaker.start()
        self._threads = [
            threading.Thread(target=self._capture_worker, name="edgevox-voice-capture", daemon=True),
            threading.Thread(target=self._stt_worker, name="edgevox-voice-stt", daemon=True),
            threading.Thread(target=self._turn_worker, name="edgevox-voice-turn", daemon=True),
        ]
        for t in self._threads:
            t.start()

    def stop(self, timeout_s: float = 5.0) -> StopReport:
        """Cancel the running turn, drop queued work (reported), close devices, join every thread.

        Safe from many threads at once (say a spoken "stop" and a ROS shutdown): the first caller
        stops, the others wait up to their own ``timeout_s`` and get the same report - or, if their
        deadline comes first, one naming the threads still running. A later call joins what the
        stop left running and reports that (it cancels nothing new)."""
        timeout_s = wait_s("timeout_s", timeout_s, owner=f"VoiceLoop {self.name!r}.stop")
        return self._stops.run(timeout_s, self._stop)

    def _still_running(self) -> StopReport:
        me = threading.current_thread()
        return StopReport([t.name for t in self._threads + self.speaker.threads if t.is_alive() and t is not me])

    def _join_threads(self, deadline: float, report: StopReport) -> StopReport:
        me = threading.current_thread()
        for t in self._threads + self.speaker.threads:
            if t is not me:
                t.join(max(0.0, deadline - time.monotonic()))
            if t.is_alive():
                report.abandoned_threads.append(t.name)
        return report

    def _stop(self, deadline: float | None) -> StopReport:
        assert deadline is not None  # stop() always passes a timeout
        report = StopReport()
        if self._stopped_once or self._state != "running":
            self._state = "stopped"
            self._stopped_once = True
            return self._join_threads(deadline, report)  # what an earlier stop left running, if anything
        self._stopped_once = True
        self._state = "stopping"
        self._stopping.set()
        with self._cond:
            report.dropped_utterances = len(self._utterances)
            self._utterances.clear()
            self._spec_job = None
            queued = list(self._turns)
            self._turns.clear()
            spec = self._take_spec_turn()
            if self._current is not None and self._current[0] is not spec:
                report.cancelled_turns.append(self._current[0].turn_id)
            queued = [r for r in queued if r is not spec]
            self._cond.notify_all()
        report.cancelled_turns += [r.turn_id for r in queued]
        assert self._root is not None
        self._root.cancel(SHUTDOWN_REASON)
        self.speaker.halt(self.speaker.current)
        self.speaker.signal_stop()
        for req in queued:
            self._publish(TurnDone(turn_id=req.turn_id, session_id=self.session_id, status="cancelled"))
        with suppress(Exception):
            self.audio_in.stop()
        self._join_threads(deadline, report)
        with suppress(Exception):
            self.audio_out.stop()
        self._root.detach()
        self._state = "stopped"
        return report

    @property
    def running(self) -> bool:
        return self._state == "running"

    # -- public inputs ------------------------------------------------------------------------

    def submit_text(self, text: str) -> int:
        """Handle typed text like a transcript (stop check first, then a queued turn). Returns its turn id."""
        if self._state != "running":
            raise LifecycleError(f"VoiceLoop.submit_text(): the loop is {self._state}; call start() first")
        turn_id = next(self._ids)
        with self._cond:
            self._stt_busy = True  # counts as pending work until queued, so wait_idle cannot slip through
        try:
            self._handle_transcript(turn_id, text.strip(), origin="text", stt_s=0.0, echo=False)
        finally:
            with self._cond:
                self._stt_busy = False
                self._cond.notify_all()
        return turn_id

    def say(self, text: str) -> int:
        """Speak ``text`` as the robot (an announcement, a delivered background result), queued
        as a turn after any pending ones: no agent runs, but barge-in, the safety stop and the
        turn events apply as to any reply. Returns its turn id; empty text is ignored (-1)."""
        if self._state != "running":
            raise LifecycleError(f"VoiceLoop.say(): the loop is {self._state}; call start() first")
        text = text.strip()
        if not _speakable(text):
            return -1
        turn_id = next(self._ids)
        with self._cond:
            if self._stopping.is_set():
                return turn_id
            self._turns.append(_TurnRequest(turn_id, text, say=True))
            self._cond.notify_all()
        return turn_id

    def interrupt(self) -> bool:
        """Stop the reply being spoken or generated now, as a barge-in does (the history keeps
        what was spoken; queued turns and skills go on). E.g. for an interrupt command from
        ROS. Publishes ``Interrupted``, not another ``InterruptEvent``. True if a turn was cut."""
        return self._interrupt_current(time.time(), announce=False)

    def safety_stop(self, reason: str = "stop requested", text: str = "", *, announce: bool = True) -> Stopped:
        """Run the safety stop now (what a stop phrase does), e.g. from a hardware button.

        ``announce=False`` when the stop came *from* the bus (a :class:`StopEvent` someone else
        published): it is not published a second time."""
        return self._safety_stop(0, text, "", time.time(), reason=reason, announce=announce)

    def wait_idle(self, timeout_s: float) -> bool:
        """Block until nothing is queued, transcribing, running or playing; True if idle in time."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while True:
                busy = (
                    self._utterances
                    or self._spec_job is not None
                    or self._turns
                    or self._stt_busy
                    or self._current is not None
                )
                if not busy and self.speaker.idle:
                    return True
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                # Speaker state changes do not notify this condition; re-check at a short period.
                self._cond.wait(min(left, 0.02))

    def wait_input_done(self, timeout_s: float) -> bool:
        """For finite inputs (WAV files): wait for the end of input, then for idle."""
        start = time.monotonic()
        if not self._input_done.wait(timeout_s):
            return False
        return self.wait_idle(max(0.0, timeout_s - (time.monotonic() - start)))

    # -- helpers ------------------------------------------------------------------------------

    def _publish(self, event: Event) -> None:
        if not event.session_id:
            event.session_id = self.session_id
        if not event.source:
            event.source = self.name
        if not event.timestamp:
            event.timestamp = time.time()
        with suppress(Exception):  # a closed bus during shutdown must not kill a worker
            self.bus.publish(event)

    def _report_error(self, where: str, exc: BaseException) -> None:
        self._publish(
            ErrorEvent(
                where=f"{self.name}.{where}",
                error=repr(exc),
                traceback="".join(traceback.format_exception(type(exc), exc, exc.__traceback__)),
            )
        )

    # -- capture thread -----------------------------------------------------------------------

    def _capture_worker(self) -> None:
        """Capture thread: read blocks, VAD, segment; barge in; reopen a lost device."""
        seg_settings = self.settings.segmenter
        if not self.settings.speculative_stt:
            # Nothing transcribes the pauses, so no hint ever shortens the hold: no adaptive endpoint.
            seg_settings = dataclasses.replace(seg_settings, hold_silence_ms=0)
        rate = self.vad.sample_rate_hz
        segmenter = Segmenter(seg_settings, rate)
        self._segmenter = segmenter
        splitter = FrameSplitter(segmenter.frame_samples, rate)
        resampler = Resampler(self.audio_in.sample_rate_hz, rate) if self.audio_in.sample_rate_hz != rate else None
        last_audio = time.monotonic()
        last_playing = 0.0
        utt_turn_id = 0
        utt_echo = False
        guard = self.settings.echo_guard
        while not self._stopping.is_set():
            try:
                block = self.audio_in.read(self.settings.read_timeout_s)
            except EOFError:
                end = segmenter.flush()
                if end is not None:
                    self._end_utterance(utt_turn_id, end, utt_echo)
                self._publish(InputEnded())
                self._input_done.set()
                return
            except AudioDeviceError as exc:
                if not self._reopen(exc):
                    return
                self._reset_capture(segmenter, splitter)
                last_audio = time.monotonic()
                continue
            except Exception as exc:  # noqa: BLE001 - any read failure is a lost device
                if not self._reopen(exc):
                    return
                self._reset_capture(segmenter, splitter)
                last_audio = time.monotonic()
                continue
            now_mono = time.monotonic()
            if block is None:
                stall = self.settings.input_stall_s
                if stall is not None and now_mono - last_audio > stall:
                    if not self._reopen(AudioDeviceError(f"no audio from the input for {stall:.1f} s")):
                        return
                    self._reset_capture(segmenter, splitter)
                    last_audio = time.monotonic()
                continue
            last_audio = now_mono
            if resampler is not None:
                block = resampler.process(block)
            now = time.time()
            for frame, frame_end in splitter.push(block, now):
                speaking = self.speaker.speaking
                if speaking or self.audio_out.playing:
                    last_playing = now_mono
                echo = speaking or (now_mono - last_playing) * 1000 < self.settings.echo_tail_ms
                voiced = self.vad.is_speech(frame)
                if voiced and echo and guard == "energy_gate":
                    reference = self.speaker.echo_level(self.settings.energy_gate_window_ms)
                    voiced = rms(frame) > self.settings.energy_gate_ratio * reference
                event = segmenter.process(frame, voiced, frame_end)
                if isinstance(event, SegmentStart):
                    utt_turn_id = next(self._ids)
                    self._capture_turn_id = utt_turn_id
                    utt_echo = echo and guard == "half_duplex"
                    self._publish(
                        SpeechStarted(
                            turn_id=utt_turn_id,
                            timestamp=now,
                            first_voiced_at=event.first_voiced_at,
                            during_playback=speaking,
                        )
                    )
                    if speaking and not utt_echo and self.settings.barge_in:
                        self._barge_in(event.first_voiced_at)
                elif isinstance(event, SegmentPause):
                    if self.settings.speculative_stt:
                        self._speculate(utt_turn_id, event, utt_echo)
                elif isinstance(event, SegmentResume):
                    self.discard_speculation(utt_turn_id)  # the user went on: the guess is stale
                elif isinstance(event, SegmentEnd):
                    self._capture_turn_id = 0
                    self._end_utterance(utt_turn_id, event, utt_echo)

    def _reset_capture(self, segmenter: Segmenter, splitter: FrameSplitter) -> None:
        """After a device reopen: forget the utterance in progress and the VAD's stream state."""
        segmenter.reset()
        splitter.reset()
        reset_vad = getattr(self.vad, "reset", None)  # optional: stateful VADs (Silero) have one
        if callable(reset_vad):
            reset_vad()
        self._capture_turn_id = 0
        self._drop_speculation()

    def _speculate(self, turn_id: int, pause: SegmentPause, echo: bool) -> None:
        """Capture thread: offer the audio so far for speculative STT (replaces an older offer)."""
        with self._cond:
            self._spec_job = _Utterance(turn_id, pause.audio, echo)
            self._cond.notify_all()

    def _drop_speculation(self) -> None:
        with self._cond:
            self._spec_job = None
            self._spec_result = None
            spec = self._take_spec_turn()
        if spec is not None:
            self._discard(spec)

    def _end_utterance(self, turn_id: int, end: SegmentEnd, echo: bool) -> None:
        self._publish(
            SpeechEnded(
                turn_id=turn_id,
                last_voiced_at=end.last_voiced_at,
                duration_s=end.audio.shape[0] / self.vad.sample_rate_hz,
                truncated=end.truncated,
                ignored=echo,
            )
        )
        with self._cond:
            self._utterances.append(_Utterance(turn_id, end.audio, echo, end.pause_samples))
            if self._spec_job is not None and self._spec_job.turn_id == turn_id:
                # The utterance is final now: its own job (below) is what the STT thread needs.
                # A speculation already running for it may still be used if its audio matches.
                self._spec_job = None
            self._cond.notify_all()

    def _reopen(self, exc: BaseException) -> bool:
        """Restart the input until it works; False if the loop is stopping."""
        self._publish(AudioDevice(state="lost", error=str(exc)))
        attempt = 0
        while not self._stopping.is_set():
            backoff = self.settings.reopen_backoff_s
            wait_s = backoff[min(attempt, len(backoff) - 1)]
            attempt += 1
            with suppress(Exception):
                self.audio_in.stop()
            if self._stopping.wait(wait_s):
                return False
            try:
                self.audio_in.start()
            except Exception as err:  # noqa: BLE001 - keep trying; every failure is reported
                self._publish(AudioDevice(state="failed", error=str(err), attempt=attempt))
                continue
            self.device_reopens += 1
            self._publish(AudioDevice(state="reopened", attempt=attempt))
            return True
        return False

    def _barge_in(self, first_voiced_at: float) -> None:
        """Capture thread: the user spoke over the reply."""
        self._interrupt_current(first_voiced_at, announce=True)

    def _interrupt_current(self, started_at: float, *, announce: bool) -> bool:
        """Halt the reply being played and cancel its turn (barge-in semantics)."""
        current = self._current
        if current is None:
            return False
        request, ctx, audio = current
        if audio.halted or ctx.cancel_token.cancelled:
            return False
        if request.speculation is not None and not request.speculation.committed:
            return False  # nothing of it was heard
        spoken, dropped = self.speaker.halt(audio)
        cleared_at = time.time()
        ctx.cancel_token.cancel(BARGE_IN_REASON)
        if announce:
            self._publish(InterruptEvent(reason=f"{BARGE_IN_REASON} (turn {request.turn_id})"))
        self._publish(
            Interrupted(
                turn_id=request.turn_id,
                timestamp=cleared_at,
                spoken_text=spoken,
                dropped_samples=dropped,
                audio_stop_s=max(0.0, cleared_at - started_at),
            )
        )
        return True

    # -- STT thread ---------------------------------------------------------------------------

    def _stt_worker(self) -> None:
        """STT thread: transcribe utterances in order (speculations when idle); stop check; queue turns."""
        while True:
            with self._cond:
                while not self._utterances and self._spec_job is None and not self._stopping.is_set():
                    self._stt_busy = False
                    self._cond.notify_all()
                    self._cond.wait()
                if self._stopping.is_set():
                    self._stt_busy = False
                    return
                speculation: _Speculation | None = None
                if self._utterances:
                    utt = self._utterances.popleft()
                    final = True
                    speculation = self._spec_result
                    if speculation is not None and speculation.turn_id <= utt.turn_id:
                        self._spec_result = None  # used now or stale; a later turn's result stays
                    if speculation is not None and (
                        speculation.turn_id != utt.turn_id or speculation.samples != utt.pause_samples
                    ):
                        speculation = None  # another turn's, or speech went on after that pause
                else:
                    utt, self._spec_job = self._spec_job, None  # type: ignore[assignment]
                    final = False
                self._stt_busy = True
                spec_turn = self._take_spec_turn() if final else None
            try:
                vocabulary = tuple(vocabulary_for(self.settings.vocabulary, self.agent))
                if speculation is not None and speculation.vocabulary == vocabulary:
                    self._handle_transcript(
                        utt.turn_id,
                        speculation.text,
                        origin="voice",
                        stt_s=speculation.stt_s,
                        echo=utt.echo,
                        speculative=True,
                        spec_turn=spec_turn,
                    )
                    continue
                t0 = time.perf_counter()
                result = self.stt.transcribe(utt.audio, vocabulary=vocabulary)
                stt_s = time.perf_counter() - t0
                text = result.text.strip()
                if final:
                    self._handle_transcript(
                        utt.turn_id, text, origin="voice", stt_s=stt_s, echo=utt.echo, spec_turn=spec_turn
                    )
                else:
                    with self._cond:
                        self._spec_result = _Speculation(utt.turn_id, utt.audio.shape[0], vocabulary, text, stt_s)
                    segmenter = self._segmenter
                    if segmenter is not None and utt.turn_id == self._capture_turn_id:
                        # Adaptive endpoint: a complete request ends after end_silence_ms, a
                        # complete statement after statement_silence_ms, one that stops
                        # mid-phrase ("turn left and") is held for hold_silence_ms.
                        ending = classify_ending(text)
                        segmenter.hint(utt.audio.shape[0], ending.complete, statement=ending.statement)
                    self._start_speculative_turn(utt, text)
            except Exception as exc:  # noqa: BLE001 - one bad utterance must not stop listening
                self._report_error("stt", exc)
            finally:
                if spec_turn is not None and spec_turn.speculation is not None and not spec_turn.speculation.decided:
                    self._discard(spec_turn)  # the final transcript failed: never leave a guess waiting

    # -- speculative turns ---------------------------------------------------------------------

    def _start_speculative_turn(self, utt: _Utterance, text: str) -> None:
        """STT thread: start the agent on a speculative transcript, held until the endpoint
        confirms the same text (see ``edgevox.runtime.speculation``). Only when nothing else is
        running or queued, never for the robot's echo, a stop phrase or nothing speakable."""
        if not self.settings.speculative_reply or not getattr(self.agent, "supports_speculation", False):
            return
        if utt.echo or not text or not _speakable(text) or self.matcher.match(text):
            return
        with self._cond:
            old = self._spec_turn
            busy = (self._current is not None and self._current[0] is not old) or any(r is not old for r in self._turns)
            final_queued = any(u.turn_id == utt.turn_id for u in self._utterances)
            if self._stopping.is_set() or busy or final_queued:
                return
            ctx = self._loop_context.child(turn_id=utt.turn_id)
            ctx.speculation = Speculation(ctx.cancel_token, label=f"turn {utt.turn_id}")
            request = _TurnRequest(utt.turn_id, text, ctx=ctx, speculation=ctx.speculation, samples=utt.audio.shape[0])
            self._spec_turn = request
            self._turns.append(request)
            self.speculative_turns["started"] += 1
            self._cond.notify_all()
        if old is not None:
            self._discard(old)  # an earlier pause of the same utterance: the user went on
        self._publish(SpeculativeReply(turn_id=utt.turn_id, text=text, state="started"))

    def _take_spec_turn(self) -> _TurnRequest | None:
        """Remove and return the undecided speculative turn, if any. Caller holds the lock and
        commits or discards it after releasing the lock (cancelling runs callbacks)."""
        spec, self._spec_turn = self._spec_turn, None
        return spec

    def _discard(self, request: _TurnRequest, reason: str = DISCARD_REASON) -> None:
        if request.speculation is not None and not request.speculation.decided:
            request.speculation.discard(reason)
            self.speculative_turns["discarded"] += 1
            self._publish(SpeculativeReply(turn_id=request.turn_id, text=request.text, state="discarded"))

    def discard_speculation(self, turn_id: int | None = None) -> None:
        """Drop the speculative turn (of ``turn_id``; any for None): speech resumed after the pause."""
        with self._cond:
            spec = self._spec_turn
            if spec is None or (turn_id is not None and spec.turn_id != turn_id):
                return
            self._spec_turn = None
        self._discard(spec)

    def _handle_transcript(
        self,
        turn_id: int,
        text: str,
        *,
        origin: str,
        stt_s: float,
        echo: bool,
        speculative: bool = False,
        spec_turn: _TurnRequest | None = None,
    ) -> None:
        """Stop check first (no turn lock, no agent), then queue the turn - or commit the
        speculative turn started on the same text. Runs on the STT or the caller's thread."""
        heard_at = time.time()
        phrase = self.matcher.match(text) if text else None
        self._publish(
            TranscriptEvent(
                turn_id=turn_id,
                timestamp=heard_at,
                text=text,
                origin=origin,
                stt_s=stt_s,
                stop_phrase=phrase or "",
                speculative=speculative,
            )
        )
        if spec_turn is not None:
            same = spec_turn.turn_id == turn_id and spec_turn.text == text
            if same and not phrase and not echo and spec_turn.speculation is not None:
                self._publish(SpeculativeReply(turn_id=turn_id, text=text, state="committed"))
                if spec_turn.speculation.commit():  # releases what it held, in order
                    self.speculative_turns["committed"] += 1
                    return
            self._discard(spec_turn)
        if phrase:
            self._safety_stop(turn_id, text, phrase, heard_at)
            return
        if not text or echo or not _speakable(text):
            return  # nothing said, or the robot's own voice under half-duplex
        with self._cond:
            if self._stopping.is_set():
                return
            self._turns.append(_TurnRequest(turn_id, text))
            self._cond.notify_all()

    def _safety_stop(
        self, turn_id: int, text: str, phrase: str, heard_at: float, *, reason: str = "", announce: bool = True
    ) -> Stopped:
        """Halt audio, cancel the running and queued turns and *every* registered activity
        (skills from earlier turns, tools, generations, workers), tell the bus, report, confirm.

        The stop's own spoken confirmation is neither halted nor queued twice: stops that come
        together (a spoken stop and a ROS e-stop, "stop" typed again while "Stopped." plays)
        confirm once."""
        with self._stop_lock:  # two stops at once (voice + ROS): one runs, the other waits and confirms nothing new
            with self._cond:
                spec = self._take_spec_turn()  # a guess nobody heard: dropped, not reported
                queued = [r for r in self._turns if not self._is_confirmation(r) and r is not spec]
                self._turns = deque(r for r in self._turns if self._is_confirmation(r))
                current = self._current
            if spec is not None:
                self._discard(spec, STOP_REASON)
            cancelled: list[int] = []
            # The speculative turn (discarded above) was never heard: not halted or reported here.
            if current is not None and current[0] is not spec and not self._is_confirmation(current[0]):
                request, ctx, audio = current
                self.speaker.halt(audio)
                ctx.cancel_token.cancel(STOP_REASON)
                cancelled.append(request.turn_id)
            elif current is None:
                self.speaker.halt(None)
            report: CancelReport = self.activities.cancel_all(STOP_REASON, grace_s=0.0)
            done_at = time.time()
            if announce:
                why = f"stop phrase {phrase!r}" if phrase else reason or "stop requested"
                self._publish(StopEvent(reason=why, text=text, timestamp=done_at))
            for req in queued:
                cancelled.append(req.turn_id)
                self._publish(TurnDone(turn_id=req.turn_id, status="stopped"))
            report.settle(STOP_GRACE_S)
            stopped = Stopped(
                turn_id=turn_id,
                timestamp=done_at,
                phrase=phrase,
                text=text,
                reason=reason or (f"stop phrase {phrase!r}" if phrase else ""),
                cancel_s=max(0.0, done_at - heard_at),
                cancelled_turns=cancelled,
                cancelled=[a for a in report.cancelled if not a.startswith("turn ")],
                ignored=report.ignored,
            )
            self._publish(stopped)
            self._confirm_stop(stopped_something=bool(cancelled or report.cancelled))
            return stopped

    def _is_confirmation(self, request: _TurnRequest) -> bool:
        return request.say and request.text == self.settings.stop_confirmation.strip() != ""

    def _confirm_stop(self, *, stopped_something: bool) -> None:
        """Queue the spoken confirmation, unless one is already queued or playing, or one was
        queued less than ``CONFIRM_AGAIN_AFTER_S`` ago and this stop found nothing to stop
        (the same stop arriving from several sources at once)."""
        text = self.settings.stop_confirmation.strip()
        if not text or not self.running:
            return
        now = time.monotonic()
        if not stopped_something and now - self._confirmed_at < CONFIRM_AGAIN_AFTER_S:
            return
        with self._cond:
            current = self._current
            pending = any(r.say and r.text == text for r in self._turns) or (
                current is not None
                and current[0].say
                and current[0].text == text
                and not current[1].cancel_token.cancelled
            )
            if pending or self._stopping.is_set():
                return
            self._confirmed_at = now
            self._turns.append(_TurnRequest(next(self._ids), text, say=True))
            self._cond.notify_all()

    # -- turn thread --------------------------------------------------------------------------

    def _turn_worker(self) -> None:
        """Turn thread: one agent turn at a time, streamed into the speaker."""
        while True:
            with self._cond:
                while not self._turns and not self._stopping.is_set():
                    self._cond.wait()
                if self._stopping.is_set():
                    return
                request = self._turns.popleft()
                if request.speculation is not None and request.speculation.discarded:
                    continue  # a guess dropped before it started
                ctx = request.ctx or self._loop_context.child(turn_id=request.turn_id)
                audio = TurnAudio(request.turn_id, ctx.cancel_token)
                self._current = (request, ctx, audio)
            # Every turn is registered so any stop reaches it - except the stop's own confirmation.
            activity = (
                None
                if self._is_confirmation(request)
                else self.activities.start("turn", f"{request.turn_id}", ctx.cancel_token)
            )
            try:
                self._run_turn(request, ctx, audio)
            finally:
                if activity is not None:
                    activity.finish()
                self.speaker.finish_turn(audio)
                ctx.cancel_token.detach()
                with self._cond:
                    self._current = None
                    self._cond.notify_all()

    def _run_turn(self, request: _TurnRequest, ctx: AgentContext, audio: TurnAudio) -> None:
        token = ctx.cancel_token
        self.speaker.begin_turn(audio)
        request.run_or_hold(lambda: self._publish(TurnStarted(turn_id=request.turn_id, text=request.text)))
        chunker = Chunker(self.settings.chunker)
        parts: list[str] = []
        error = ""
        index = 0
        try:
            stream = iter((request.text,)) if request.say else self.agent.stream(request.text, ctx)
            try:
                for delta in stream:
                    if token.cancelled:
                        break
                    if not delta:
                        continue
                    parts.append(delta)
                    request.run_or_hold(lambda d=delta: self._publish(Token(turn_id=request.turn_id, text=d)))
                    for piece in chunker.feed(delta):
                        index = self._emit_chunk(request, audio, index, piece)
                    if index:
                        # Before pulling the next token: let TTS have the CPU while it is
                        # synthesizing with little audio buffered (see module docstring).
                        self.speaker.yield_to_tts(audio, self.settings.tts_priority_ms)
                if not token.cancelled:
                    for piece in chunker.flush():
                        index = self._emit_chunk(request, audio, index, piece)
            finally:
                close = getattr(stream, "close", None)
                if close is not None:
                    close()
            if request.speculation is not None:
                request.speculation.confirmed()  # a guess: wait for the endpoint to commit or drop it
            if not token.cancelled:
                self.speaker.end_turn(audio)
                # Wait for playback to finish (or a barge-in/stop/shutdown cancelling the turn).
                remove = token.on_cancel(lambda _r: audio.played_out.set())
                try:
                    audio.played_out.wait()
                finally:
                    remove()
        except Cancelled:
            pass
        except Exception as exc:  # noqa: BLE001 - an agent failure ends the turn, never the loop
            error = repr(exc)
            request.run_or_hold(lambda e=exc: self._report_error("agent", e))
            self.speaker.halt(audio)
        if request.speculation is not None and not request.speculation.committed:
            return  # a discarded guess (or one a stop or shutdown cut): nothing of it was released
        reason = token.reason if token.cancelled else ""
        status = (
            "error"
            if error
            else "stopped"
            if reason == STOP_REASON
            else "interrupted"
            if reason == BARGE_IN_REASON
            else "cancelled"
            if reason
            else "completed"
        )
        spoken = audio.spoken_text(self.audio_out.played_samples)
        reply = "".join(parts).strip()
        if status != "completed" and not request.say:  # an announcement is not in the agent's history
            truncate = getattr(self.agent, "truncate_reply", None)
            if callable(truncate):
                try:
                    truncate(ctx, spoken)
                except Exception as exc:  # noqa: BLE001
                    self._report_error("agent.truncate_reply", exc)
        else:
            spoken = spoken or reply
        self._publish(
            TurnDone(turn_id=request.turn_id, status=status, reply_text=reply, spoken_text=spoken, error=error)
        )

    def _emit_chunk(self, request: _TurnRequest, audio: TurnAudio, index: int, text: str) -> int:
        def emit() -> None:
            self._publish(Chunk(turn_id=audio.turn_id, index=index, text=text, spoken_text=clean_for_speech(text)))
            self.speaker.say(audio, text)

        request.run_or_hold(emit)
        return index + 1
