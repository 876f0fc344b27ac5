"""The voice loop: microphone -> VAD -> STT -> agent -> chunker -> TTS -> speaker, with barge-in and a safety stop.

(About 460 lines because :class:`VoiceLoop` is the one public face of the loop's four threads:
its lifecycle, its calls and the read-only properties the console, tests and benchmarks read;
the work itself lives in one module per thread.)

Threads (all named, all joined by :meth:`VoiceLoop.stop`), one module each::

    edgevox-voice-capture   (capture.py) AudioIn.read -> resample -> frames -> VAD -> Segmenter
                            (speech start may barge in; utterances go to the STT queue,
                            a pause in speech offers the audio so far for speculative STT)
    edgevox-voice-stt       (transcriber.py) STT.transcribe -> stop-phrase check -> turn queue
    edgevox-voice-turn      (turns.py) agent.stream(text, ctx).text_deltas() -> Chunker ->
                            Speaker.say, one turn at a time
    edgevox-voice-tts       (speaker.py) TTS.synthesize -> AudioOut.write
    edgevox-voice-playback  (speaker.py) watches played_samples: FirstAudio, end of playback

This module keeps the lifecycle and the inputs; the queues between the threads and the one
condition variable guarding them are in :mod:`edgevox.voice.queues`.

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
(``truncate_reply``, :class:`~edgevox.voice.turns.TruncatesReply`). The user's utterance
then becomes the next turn.

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
``supports_speculation``, :class:`~edgevox.voice.transcriber.SupportsSpeculation`): the agent
also starts on the speculative transcript, in
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

Echo guard: see :mod:`edgevox.voice.echo`. Wake word (``wake``, optional): :mod:`edgevox.voice.wake`.

Device loss: ``AudioIn.read`` raising :class:`AudioDeviceError`, or no audio for
``input_stall_s``, makes the capture thread publish ``AudioDevice(state="lost")``,
stop and restart the input with back-off, and publish ``reopened`` (or
``failed`` per attempt) - it keeps trying until it succeeds or the loop stops.

Capture failure: any other exception on the capture thread (the VAD, the wake word detector)
would leave the robot deaf, the stop phrase included, so it is never silent: the safety stop
runs, :class:`CaptureFailed` is published with one line saying why (:attr:`VoiceLoop.failure`),
and the input counts as ended; the application stops (``edgevox run`` exits with an error).
"""

from __future__ import annotations

import threading
import time
import traceback
from contextlib import suppress

from edgevox.agents.base import Agent
from edgevox.engines.base import STT, TTS, VAD, AudioIn, AudioOut
from edgevox.errors import LifecycleError
from edgevox.runtime.activities import ActivityRegistry
from edgevox.runtime.bus import EventBus
from edgevox.runtime.context import AgentContext
from edgevox.runtime.events import ErrorEvent, Event
from edgevox.runtime.lifecycle import ComponentState, SharedStop, StopReport, component_lifecycle, stop_timeout
from edgevox.runtime.limits import wait_s
from edgevox.voice.aec import EchoCanceller
from edgevox.voice.capture import Capture
from edgevox.voice.events import CaptureFailed, Stopped, TurnDone
from edgevox.voice.queues import LoopQueues, TurnRequest
from edgevox.voice.settings import VoiceSettings
from edgevox.voice.speaker import Speaker
from edgevox.voice.stop_check import StopCheck
from edgevox.voice.stop_phrases import StopPhraseMatcher
from edgevox.voice.transcriber import Transcriber, speakable
from edgevox.voice.turns import BARGE_IN_REASON, CONFIRM_AGAIN_AFTER_S, STOP_REASON, Turns
from edgevox.voice.wake import Wake

__all__ = [
    "BARGE_IN_REASON",
    "CONFIRM_AGAIN_AFTER_S",
    "SHUTDOWN_REASON",
    "STOP_REASON",
    "VoiceLoop",
    "VoiceSettings",
]

SHUTDOWN_REASON = "voice loop stopping"


class VoiceLoop:
    """Runs a voice conversation over the given engines (see the module docstring).

    The loop owns the lifecycle (:meth:`start`, :meth:`stop`, :meth:`wait_idle`) and the
    inputs (:meth:`submit_text`, :meth:`say`, :meth:`interrupt`, :meth:`safety_stop`); the
    threads' work lives in :class:`~edgevox.voice.capture.Capture`,
    :class:`~edgevox.voice.transcriber.Transcriber` and :class:`~edgevox.voice.turns.Turns`,
    which share one :class:`~edgevox.voice.queues.LoopQueues`.
    """

    def __init__(
        self,
        bus: EventBus,
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
        wake: Wake | None = None,
    ) -> None:
        self.bus = bus
        self.vad = vad
        self.stt = stt
        self.agent = agent
        self.tts = tts
        self.audio_in = audio_in
        self.audio_out = audio_out
        self.settings = settings = settings or VoiceSettings()
        self.name = name
        seg = settings.segmenter
        if vad.frame_ms != seg.frame_ms:
            raise ValueError(f"VAD frame_ms = {vad.frame_ms} but segmenter.frame_ms = {seg.frame_ms}: set them equal")
        if stt.sample_rate_hz != vad.sample_rate_hz:
            raise ValueError(f"STT rate {stt.sample_rate_hz} Hz differs from VAD rate {vad.sample_rate_hz} Hz")
        self.session_id = settings.session_id
        base = context or AgentContext(bus=bus, session_id=self.session_id)
        self._base_context = base
        self.activities: ActivityRegistry = base.activities if base.activities is not None else ActivityRegistry(name)
        """Where turns, generations, tools and skills register; the safety stop cancels all of it
        (the runtime's registry when the loop runs in an App, else the loop's own)."""
        # No phrases: the spoken stop is off (safety.enabled: false); the other stop paths stay.
        self.matcher = (
            StopPhraseMatcher(settings.stop_phrases, negations=settings.stop_negations)
            if settings.stop_phrases
            else None
        )
        self.stop_check = StopCheck(self.matcher, stt)
        """The spoken stop check (:mod:`edgevox.voice.stop_check`)."""
        self.failure: str | None = None
        """Why the loop can no longer hear (the capture thread died), or None."""
        self._life = component_lifecycle(f"VoiceLoop {name!r}", noun="VoiceLoop")
        self._stops: SharedStop[StopReport] = SharedStop(self._still_running)
        self._threads: list[threading.Thread] = []
        self.speaker = Speaker(tts, audio_out, self._publish, session_id=self.session_id, on_error=self._report_error)
        self._q = LoopQueues(self._publish)
        self._turns = Turns(
            self._q,
            agent,
            self.speaker,
            audio_out,
            self.activities,
            chunker=settings.chunker,
            tts_priority_ms=settings.tts_priority_ms,
            stop_confirmation=settings.stop_confirmation,
            report_error=self._report_error,
            running=lambda: self.running,
        )
        self._capture = Capture(
            self._q,
            vad,
            audio_in,
            audio_out,
            self.speaker,
            settings,
            barge_in=lambda at: self._turns.interrupt_current(at, announce=True),
            wake=wake,
            something_running=lambda: len(self.activities) > 0,
        )
        self._transcriber = Transcriber(
            self._q,
            stt,
            agent,
            self.stop_check,
            self._capture,
            self._turns,
            vocabulary=settings.vocabulary,
            speculative_reply=settings.speculative_reply,
            report_error=self._report_error,
        )

    @property
    def speculative_turns(self) -> dict[str, int]:
        """Speculative turns ``started``, ``committed`` and ``discarded`` so far."""
        return self._q.speculative_turns

    @property
    def echo_delay_ms(self) -> float | None:
        """How late the microphone hears the output, as measured while the robot speaks
        (:class:`~edgevox.voice.echo.EchoDelay`); ``None`` before a measure."""
        return self._capture.echo_delay.delay_ms

    @property
    def echo_canceller(self) -> EchoCanceller | None:
        """The echo canceller (``echo_guard: aec``, :mod:`edgevox.voice.aec`), or None."""
        return self._capture.aec

    @property
    def utterances_asleep(self) -> int:
        """Utterances heard while waiting for the wake word (none of them a turn); 0 without one."""
        return self._capture.utterances_asleep

    @property
    def wake_phrase(self) -> str | None:
        """The wake word to say (``Okay Nabu``), or None: every utterance is a turn."""
        wake = self._capture.wake
        return wake.detector.phrase if wake is not None else None

    @property
    def device_reopens(self) -> int:
        """How often the capture thread reopened a lost input."""
        return self._capture.device_reopens

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        """Open the devices and start the threads; returns at once. Raises if a device cannot open."""
        self._life.to(ComponentState.STARTING, "start()")
        # The loop's own context: its token (the root of every turn's token) is a child of the
        # caller's, so cancelling the caller's context stops the loop's turns, and stop() never
        # cancels the caller's token.
        self._q.context = self._base_context.child(session_id=self.session_id, activities=self.activities)
        self.audio_out.start()
        try:
            self.audio_in.start()
        except BaseException:
            self.audio_out.stop()
            self._life.force(ComponentState.NEW)  # nothing is left open: start() may be tried again
            raise
        self._life.to(ComponentState.RUNNING)
        self.speaker.start()
        self._threads = [
            threading.Thread(target=self._run_capture, name="edgevox-voice-capture", daemon=True),
            threading.Thread(target=self._transcriber.run, name="edgevox-voice-stt", daemon=True),
            threading.Thread(target=self._turns.run, name="edgevox-voice-turn", daemon=True),
        ]
        for t in self._threads:
            t.start()

    def _run_capture(self) -> None:
        """Capture thread: :meth:`Capture.run`; if it dies, nothing more is heard (see "Capture
        failure" in the module docstring)."""
        try:
            self._capture.run()
        except BaseException as exc:  # noqa: BLE001 - whatever killed it, the robot is deaf now
            self._capture_died(exc)

    def _capture_died(self, exc: BaseException) -> None:
        self._report_error("capture", exc)  # the traceback, for the log
        if self._q.stopping.is_set():
            return  # the loop is stopping anyway
        self.failure = (
            f"the voice loop's capture thread died ({type(exc).__name__}: {exc}): "
            "nothing more can be heard, the stop phrase included"
        )
        with suppress(Exception):
            self.safety_stop(reason="the microphone is no longer listened to")
        self._publish(CaptureFailed(error=self.failure))
        self._q.input_done.set()  # nothing more will come in: waits for the end of input return

    def stop(self, timeout_s: float | None = None, *, timeout: float | None = None) -> StopReport:
        """Cancel the running turn, drop queued work (reported), close devices, join every thread.

        The report names the threads that did not finish (``abandoned``), the turns running or
        queued (``cancelled_turns``; each queued one also got ``TurnDone(status="cancelled")``)
        and counts the utterances not yet transcribed (``discarded``). ``timeout`` is EdgeVox's
        spelling of ``timeout_s`` (default 5 s).

        Safe from many threads at once (say a spoken "stop" and a ROS shutdown): the first caller
        stops, the others wait up to their own ``timeout_s`` and get the same report - or, if their
        deadline comes first, one naming the threads still running. A later call joins what the
        stop left running and reports that (it cancels nothing new)."""
        limit = stop_timeout(timeout_s, timeout, 5.0)
        limit = wait_s("timeout_s", limit, owner=f"VoiceLoop {self.name!r}.stop")
        return self._stops.run(limit, self._stop)

    def _still_running(self) -> StopReport:
        me = threading.current_thread()
        return StopReport.abandoned_threads(
            t.name for t in self._threads + self.speaker.threads if t.is_alive() and t is not me
        )

    def _stop(self, deadline: float | None) -> StopReport:
        assert deadline is not None  # stop() always passes a timeout
        report = StopReport()
        if not self._life.to_if(ComponentState.STOPPING, ComponentState.RUNNING):
            self._life.force(ComponentState.STOPPED)
            return report.join(self._threads + self.speaker.threads, deadline)  # what an earlier stop left running
        q = self._q
        q.stopping.set()
        with q.cond:
            report.discarded = len(q.utterances)
            q.utterances.clear()
            q.spec_job = None
            queued = list(q.turns)
            q.turns.clear()
            spec = q.take_spec_turn()
            if q.current is not None and q.current.request is not spec:
                report.cancelled_turns.append(q.current.request.turn_id)
            queued = [r for r in queued if r is not spec]
            q.cond.notify_all()
        report.cancelled_turns += [r.turn_id for r in queued]
        root = q.loop_context.cancel_token
        root.cancel(SHUTDOWN_REASON)
        self.speaker.halt(self.speaker.current)
        self.speaker.signal_stop()
        for req in queued:
            self._publish(TurnDone(turn_id=req.turn_id, session_id=self.session_id, status="cancelled"))
        with suppress(Exception):
            self.audio_in.stop()
        report.join(self._threads + self.speaker.threads, deadline)
        with suppress(Exception):
            self.audio_out.stop()
        root.detach()
        self._life.to(ComponentState.STOPPED)
        return report

    @property
    def running(self) -> bool:
        return self._life.state is ComponentState.RUNNING

    def _require_running(self, action: str) -> None:
        state = self._life.state
        if state is not ComponentState.RUNNING:
            raise LifecycleError(f"VoiceLoop.{action}: the loop is {state.value}; call start() first")

    # -- public inputs ------------------------------------------------------------------------

    def submit_text(self, text: str, *, channel: str = "text") -> int:
        """Handle typed text like a transcript (stop check first, then a queued turn). Returns its turn id.
        ``channel`` (a ROS bridge passes ``ros2``/``ros1``): the transcript's ``origin``, the turn's ``ctx.channel``."""
        self._require_running("submit_text()")
        q = self._q
        turn_id = next(q.ids)
        with q.cond:
            q.stt_busy = True  # counts as pending work until queued, so wait_idle cannot slip through
        try:
            self._transcriber.handle_transcript(turn_id, text.strip(), origin=channel, stt_s=0.0, echo=False)
        finally:
            with q.cond:
                q.stt_busy = False
                q.cond.notify_all()
        return turn_id

    def say(self, text: str) -> int:
        """Speak ``text`` as the robot (an announcement, a delivered background result), queued
        as a turn after any pending ones: no agent runs, but barge-in, the safety stop and the
        turn events apply as to any reply. Returns its turn id; empty text is ignored (-1)."""
        self._require_running("say()")
        text = text.strip()
        if not speakable(text):
            return -1
        q = self._q
        turn_id = next(q.ids)
        with q.cond:
            if q.stopping.is_set():
                return turn_id
            q.turns.append(TurnRequest(turn_id, text, say=True))
            q.cond.notify_all()
        return turn_id

    def interrupt(self) -> bool:
        """Stop the reply being spoken or generated now, as a barge-in does (the history keeps
        what was spoken; queued turns and skills go on). E.g. for an interrupt command from
        ROS. Publishes ``Interrupted``, not another ``InterruptEvent``. True if a turn was cut."""
        return self._turns.interrupt_current(time.time(), announce=False)

    def safety_stop(self, reason: str = "stop requested", text: str = "", *, announce: bool = True) -> Stopped:
        """Run the safety stop now (what a stop phrase does), e.g. from a hardware button.

        ``announce=False`` when the stop came *from* the bus (a :class:`StopEvent` someone else
        published): it is not published a second time."""
        return self._turns.safety_stop(0, text, "", time.time(), reason=reason, announce=announce)

    def discard_speculation(self, turn_id: int | None = None) -> None:
        """Drop the speculative turn (of ``turn_id``; any for None): speech resumed after the pause."""
        self._q.discard_speculation(turn_id)

    def wait_idle(self, timeout_s: float) -> bool:
        """Block until nothing is queued, transcribing, running or playing; True if idle in time."""
        deadline = time.monotonic() + timeout_s
        q = self._q
        with q.cond:
            while True:
                if not q.busy() and self.speaker.idle:
                    return True
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                # Speaker state changes do not notify this condition; re-check at a short period.
                q.cond.wait(min(left, 0.02))

    def wait_input_done(self, timeout_s: float) -> bool:
        """For finite inputs (WAV files): wait for the end of input, then for idle."""
        start = time.monotonic()
        if not self._q.input_done.wait(timeout_s):
            return False
        return self.wait_idle(max(0.0, timeout_s - (time.monotonic() - start)))

    # -- helpers (any thread) -----------------------------------------------------------------

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
