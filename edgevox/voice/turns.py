"""The turn thread (``edgevox-voice-turn``): queued turns -> agent stream -> chunker -> speaker; interrupts and the safety stop.

:class:`Turns` runs one turn at a time from :attr:`LoopQueues.turns`: the agent's
text deltas (``agent.stream(task, ctx)``: an :class:`~edgevox.agents.base.AgentStream`,
read through ``text_deltas()``) are published as ``Token`` events, cut into chunks by the
:class:`~edgevox.voice.chunker.Chunker` and handed to the
:class:`~edgevox.voice.speaker.Speaker`; the turn ends when its audio has played (or it
is cancelled). A turn whose ``AgentStream`` ends without a word and with ``ok=False`` ends
as an error naming why (``TurnDone(status="error")``). An announcement (``VoiceLoop.say``)
runs no agent: its text is spoken as one delta.
A speculative turn's events and audio are held by its
:class:`~edgevox.runtime.speculation.Speculation` until the endpoint commits it.

Which thread calls what:

* :meth:`run` - the turn thread only.
* :meth:`interrupt_current` - the capture thread (barge-in) or any caller of
  ``VoiceLoop.interrupt``: halts the current reply and cancels its token.
* :meth:`safety_stop` - the STT thread (a stop phrase), the caller of ``submit_text`` or
  ``VoiceLoop.safety_stop`` (a button, a bus ``StopEvent``). It never waits for the turn
  thread and never takes a turn lock; ``_stop_lock`` only serialises two stops.

After a cut reply the agent's history keeps what was heard, if the agent offers
:class:`TruncatesReply`.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from functools import partial
from typing import Protocol, runtime_checkable

from edgevox.agents.base import Agent, AgentStream
from edgevox.engines.base import AudioOut
from edgevox.errors import AgentError, Cancelled
from edgevox.runtime.activities import SAFETY_STOP_REASON, STOP_GRACE_S, ActivityRegistry, CancelReport
from edgevox.runtime.context import AgentContext
from edgevox.runtime.events import InterruptEvent, StopEvent
from edgevox.voice.chunker import Chunker, ChunkerSettings
from edgevox.voice.events import Chunk, Interrupted, Stopped, Token, TurnDone, TurnStarted
from edgevox.voice.queues import CurrentTurn, LoopQueues, TurnRequest
from edgevox.voice.speaker import Speaker, TurnAudio
from edgevox.voice.speechtext import clean_for_speech

STOP_REASON = SAFETY_STOP_REASON
BARGE_IN_REASON = "barge-in"
CONFIRM_AGAIN_AFTER_S = 2.0
"""A stop that finds nothing running within this long of the last confirmation is not confirmed again."""


@runtime_checkable
class TruncatesReply(Protocol):
    """An agent whose history can keep only what was heard of a cut reply (barge-in, stop)."""

    def truncate_reply(self, ctx: AgentContext, spoken_text: str) -> None: ...


class Turns:
    """The turn thread's work (see the module docstring)."""

    def __init__(
        self,
        queues: LoopQueues,
        agent: Agent,
        speaker: Speaker,
        audio_out: AudioOut,
        activities: ActivityRegistry,
        *,
        chunker: ChunkerSettings,
        tts_priority_ms: int,
        stop_confirmation: str,
        report_error: Callable[[str, BaseException], None],
        running: Callable[[], bool],
    ) -> None:
        self.q = queues
        self.agent = agent
        self.speaker = speaker
        self.audio_out = audio_out
        self.activities = activities
        self.chunker = chunker
        self.tts_priority_ms = tts_priority_ms
        self.confirmation = stop_confirmation.strip()
        self._report_error = report_error
        self._running = running
        self._stop_lock = threading.Lock()
        self._confirmed_at = -1e9

    # -- turn thread --------------------------------------------------------------------------

    def run(self) -> None:
        """Turn thread: one agent turn at a time, streamed into the speaker."""
        q = self.q
        while True:
            with q.cond:
                while not q.turns and not q.stopping.is_set():
                    q.cond.wait()
                if q.stopping.is_set():
                    return
                request = q.turns.popleft()
                if request.speculation is not None and request.speculation.discarded:
                    continue  # a guess dropped before it started
                ctx = request.ctx or q.loop_context.child(turn_id=request.turn_id, channel=request.channel)
                audio = TurnAudio(request.turn_id, ctx.cancel_token)
                q.current = CurrentTurn(request, ctx, audio)
            # Every turn is registered so any stop reaches it - except the stop's own confirmation.
            activity = (
                None
                if self.is_confirmation(request)
                else self.activities.start("turn", f"{request.turn_id}", ctx.cancel_token)
            )
            try:
                self._run_turn(request, ctx, audio)
            finally:
                if activity is not None:
                    activity.finish()
                self.speaker.finish_turn(audio)
                ctx.cancel_token.detach()
                with q.cond:
                    q.current = None
                    q.cond.notify_all()

    def _run_turn(self, request: TurnRequest, ctx: AgentContext, audio: TurnAudio) -> None:
        publish = self.q.publish
        token = ctx.cancel_token
        self.speaker.begin_turn(audio)
        request.run_or_hold(lambda: publish(TurnStarted(turn_id=request.turn_id, text=request.text)))
        chunker = Chunker(self.chunker)
        parts: list[str] = []
        error = ""
        index = 0
        try:
            stream = None if request.say else self.agent.stream(request.text, ctx)
            deltas: Iterator[str] = iter((request.text,)) if stream is None else stream.text_deltas()
            try:
                for delta in deltas:
                    if token.cancelled:
                        break
                    if not delta:
                        continue
                    parts.append(delta)
                    request.run_or_hold(partial(publish, Token(turn_id=request.turn_id, text=delta)))
                    for piece in chunker.feed(delta):
                        index = self._emit_chunk(request, audio, index, piece)
                    if index:
                        # Before pulling the next token: let TTS have the CPU while it is
                        # synthesizing with little audio buffered (see edgevox.voice.loop).
                        self.speaker.yield_to_tts(audio, self.tts_priority_ms)
                else:
                    if stream is not None:
                        _raise_if_failed_silently(stream, parts)
                if not token.cancelled:
                    for piece in chunker.flush():
                        index = self._emit_chunk(request, audio, index, piece)
            finally:
                if stream is not None:
                    stream.close()  # stops the run at its next step when the turn was cut
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
            request.run_or_hold(partial(self._report_error, "agent", exc))
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
            if isinstance(self.agent, TruncatesReply):
                try:
                    self.agent.truncate_reply(ctx, spoken)
                except Exception as exc:  # noqa: BLE001
                    self._report_error("agent.truncate_reply", exc)
        else:
            spoken = spoken or reply
        publish(TurnDone(turn_id=request.turn_id, status=status, reply_text=reply, spoken_text=spoken, error=error))

    def _emit_chunk(self, request: TurnRequest, audio: TurnAudio, index: int, text: str) -> int:
        def emit() -> None:
            self.q.publish(Chunk(turn_id=audio.turn_id, index=index, text=text, spoken_text=clean_for_speech(text)))
            self.speaker.say(audio, text)

        request.run_or_hold(emit)
        return index + 1

    # -- interrupts (capture thread, callers) ------------------------------------------------

    def interrupt_current(self, started_at: float, *, announce: bool) -> bool:
        """Halt the reply being played and cancel its turn (barge-in semantics)."""
        current = self.q.current
        if current is None:
            return False
        request, ctx, audio = current.request, current.ctx, current.audio
        if audio.halted or ctx.cancel_token.cancelled:
            return False
        if request.speculation is not None and not request.speculation.committed:
            return False  # nothing of it was heard
        spoken, dropped = self.speaker.halt(audio)
        cleared_at = time.time()
        ctx.cancel_token.cancel(BARGE_IN_REASON)
        if announce:
            self.q.publish(InterruptEvent(reason=f"{BARGE_IN_REASON} (turn {request.turn_id})"))
        self.q.publish(
            Interrupted(
                turn_id=request.turn_id,
                timestamp=cleared_at,
                spoken_text=spoken,
                dropped_samples=dropped,
                audio_stop_s=max(0.0, cleared_at - started_at),
            )
        )
        return True

    # -- the safety stop (STT thread, callers) -----------------------------------------------

    def safety_stop(
        self, turn_id: int, text: str, phrase: str, heard_at: float, *, reason: str = "", announce: bool = True
    ) -> Stopped:
        """Halt audio, cancel the running and queued turns and *every* registered activity
        (skills from earlier turns, tools, generations, workers), tell the bus, report, confirm.

        The stop's own spoken confirmation is neither halted nor queued twice: stops that come
        together (a spoken stop and a ROS e-stop, "stop" typed again while "Stopped." plays)
        confirm once."""
        q = self.q
        with self._stop_lock:  # two stops at once (voice + ROS): one runs, the other waits and confirms nothing new
            with q.cond:
                spec = q.take_spec_turn()  # a guess nobody heard: dropped, not reported
                queued = [r for r in q.turns if not self.is_confirmation(r) and r is not spec]
                q.turns = deque(r for r in q.turns if self.is_confirmation(r))
                current = q.current
            if spec is not None:
                q.discard(spec, STOP_REASON)
            cancelled: list[int] = []
            # The speculative turn (discarded above) was never heard: not halted or reported here.
            if current is not None and current.request is not spec and not self.is_confirmation(current.request):
                self.speaker.halt(current.audio)
                current.ctx.cancel_token.cancel(STOP_REASON)
                cancelled.append(current.request.turn_id)
            elif current is None:
                self.speaker.halt(None)
            report: CancelReport = self.activities.cancel_all(STOP_REASON, grace_s=0.0)
            done_at = time.time()
            if announce:
                why = f"stop phrase {phrase!r}" if phrase else reason or "stop requested"
                q.publish(StopEvent(reason=why, text=text, timestamp=done_at))
            for req in queued:
                cancelled.append(req.turn_id)
                q.publish(TurnDone(turn_id=req.turn_id, status="stopped"))
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
            q.publish(stopped)
            self._confirm_stop(stopped_something=bool(cancelled or report.cancelled))
            return stopped

    def is_confirmation(self, request: TurnRequest) -> bool:
        return request.say and request.text == self.confirmation != ""

    def _confirm_stop(self, *, stopped_something: bool) -> None:
        """Queue the spoken confirmation, unless one is already queued or playing, or one was
        queued less than ``CONFIRM_AGAIN_AFTER_S`` ago and this stop found nothing to stop
        (the same stop arriving from several sources at once)."""
        text = self.confirmation
        if not text or not self._running():
            return
        now = time.monotonic()
        if not stopped_something and now - self._confirmed_at < CONFIRM_AGAIN_AFTER_S:
            return
        q = self.q
        with q.cond:
            current = q.current
            pending = any(r.say and r.text == text for r in q.turns) or (
                current is not None
                and current.request.say
                and current.request.text == text
                and not current.ctx.cancel_token.cancelled
            )
            if pending or q.stopping.is_set():
                return
            self._confirmed_at = now
            q.turns.append(TurnRequest(next(q.ids), text, say=True))
            q.cond.notify_all()


def _raise_if_failed_silently(stream: AgentStream, parts: list[str]) -> None:
    """A turn that failed without a word (a refused over-long request, an engine error) ends
    as an error naming why, so the console and ``TurnDone`` say it, not "(no reply)"."""
    if any(p.strip() for p in parts):
        return
    result = stream.result()
    if not result.ok and not result.cancelled and result.error:
        raise AgentError(result.error)
