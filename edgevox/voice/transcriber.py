"""The STT thread (``edgevox-voice-stt``): utterances -> transcripts -> stop check -> turn queue.

:class:`Transcriber` takes final utterances in order from :attr:`LoopQueues.utterances`
and, when none waits, the latest pause's audio (``spec_job``) for speculative STT.
Every confirmed transcript is matched against the stop phrases *before* any agent sees
it (:meth:`handle_transcript`, also called for typed text by ``VoiceLoop.submit_text``).

A speculative transcript (see the speculative STT paragraph of :mod:`edgevox.voice.loop`)
is kept and used for the final utterance when nothing was said after the pause and the
vocabulary is the same; it hints the capture thread's endpoint
(:meth:`~edgevox.voice.capture.Capture.hint`); and, for agents that
:class:`SupportsSpeculation`, it starts a speculative turn, committed or discarded when the
final transcript arrives.

STT is biased with the configured vocabulary plus the tools the next turn may use
(:func:`~edgevox.voice.vocabulary.vocabulary_for`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from edgevox.agents.base import Agent
from edgevox.engines.base import STT
from edgevox.runtime.speculation import Speculation
from edgevox.voice.capture import Capture
from edgevox.voice.events import SpeculativeReply, TranscriptEvent
from edgevox.voice.queues import LoopQueues, SpeculativeTranscript, TurnRequest, Utterance
from edgevox.voice.speechtext import clean_for_speech
from edgevox.voice.stop_check import StopCheck
from edgevox.voice.turns import Turns
from edgevox.voice.vocabulary import vocabulary_for


@runtime_checkable
class SupportsSpeculation(Protocol):
    """An agent that may run on a speculative transcript: what it says or does is held by
    ``ctx.speculation`` until committed (``supports_speculation = True``)."""

    supports_speculation: bool


def speakable(text: str) -> bool:
    """Whether ``text`` has anything a voice could say. Only a bounded head is cleaned: the
    check runs on the caller's thread (the stdin reader, the STT thread) before queueing."""
    return bool(clean_for_speech(text[:500]))


class Transcriber:
    """The STT thread's work (see the module docstring)."""

    def __init__(
        self,
        queues: LoopQueues,
        stt: STT,
        agent: Agent,
        stop_check: StopCheck,
        capture: Capture,
        turns: Turns,
        *,
        vocabulary: tuple[str, ...],
        speculative_reply: bool,
        report_error: Callable[[str, BaseException], None],
    ) -> None:
        self.q = queues
        self.stt = stt
        self.agent = agent
        self.stop_check = stop_check
        self.capture = capture
        self.turns = turns
        self.vocabulary = vocabulary
        self.speculative_reply = speculative_reply
        self._report_error = report_error
        self._stopped_turn = 0
        """The utterance a pause's transcript already stopped for (:meth:`_early_stop`)."""

    def run(self) -> None:
        """STT thread: transcribe utterances in order (speculations when idle); stop check; queue turns."""
        q = self.q
        while True:
            with q.cond:
                while not q.utterances and q.spec_job is None and not q.stopping.is_set():
                    q.stt_busy = False
                    q.cond.notify_all()
                    q.cond.wait()
                if q.stopping.is_set():
                    q.stt_busy = False
                    return
                speculation: SpeculativeTranscript | None = None
                utt: Utterance
                if q.utterances:
                    utt = q.utterances.popleft()
                    final = True
                    speculation = q.spec_result
                    if speculation is not None and speculation.turn_id <= utt.turn_id:
                        q.spec_result = None  # used now or stale; a later turn's result stays
                    if speculation is not None and (
                        speculation.turn_id != utt.turn_id or speculation.samples != utt.pause_samples
                    ):
                        speculation = None  # another turn's, or speech went on after that pause
                else:
                    assert q.spec_job is not None
                    utt, q.spec_job = q.spec_job, None
                    final = False
                q.stt_busy = True
                spec_turn = q.take_spec_turn() if final else None
            try:
                vocabulary = vocabulary_for(self.vocabulary, self.agent)
                if speculation is not None and speculation.vocabulary == vocabulary:
                    text, phrase = self._listen_again(utt, speculation.text)
                    self.handle_transcript(
                        utt.turn_id,
                        text,
                        stop_phrase=phrase,
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
                    text, phrase = self._listen_again(utt, text)
                    self.handle_transcript(
                        utt.turn_id,
                        text,
                        stop_phrase=phrase,
                        origin="voice",
                        stt_s=stt_s,
                        echo=utt.echo,
                        spec_turn=spec_turn,
                    )
                elif utt.watch and self.stop_check.phrase(text):
                    self._early_stop(utt, text, stt_s)
                else:
                    with q.cond:
                        q.spec_result = SpeculativeTranscript(utt.turn_id, utt.audio.shape[0], vocabulary, text, stt_s)
                    self.capture.hint(utt.turn_id, utt.audio.shape[0], text)
                    self._start_speculative_turn(utt, text)
            except Exception as exc:  # noqa: BLE001 - one bad utterance must not stop listening
                self._report_error("stt", exc)
            finally:
                if spec_turn is not None and spec_turn.speculation is not None and not spec_turn.speculation.decided:
                    q.discard(spec_turn)  # the final transcript failed: never leave a guess waiting

    def _listen_again(self, utt: Utterance, text: str) -> tuple[str, str | None]:
        """The stop check's second listen (:mod:`edgevox.voice.stop_check`): for a short utterance
        begun while the robot talked or acted, not taken for its echo, with no stop phrase in
        ``text``: (the text that holds one, the phrase) when it finds one, else (``text``, None)."""
        if not utt.watch or utt.echo or utt.turn_id == self._stopped_turn or self.stop_check.phrase(text):
            return text, None
        heard = self.stop_check.listen_again(utt.audio, utt.linear, heard=text)
        return heard if heard is not None else (text, None)

    def _early_stop(self, utt: Utterance, text: str, stt_s: float) -> None:
        """While the robot talks or acts (the utterance is watched), a pause's transcript with a
        stop phrase stops now, not after the endpoint's silence (``end_silence_ms`` later): a
        stop never waits to hear the rest of the sentence (a negation comes before the phrase it
        negates, so the prefix already shows it). With nothing running there is nothing to stop
        early, and the final transcript decides ("stop ... playing that" may still turn out to
        be a request). The final transcript of the same utterance does not stop a second time."""
        self.handle_transcript(utt.turn_id, text, origin="voice", stt_s=stt_s, echo=utt.echo, speculative=True)
        self._stopped_turn = utt.turn_id

    # -- speculative turns ---------------------------------------------------------------------

    def _start_speculative_turn(self, utt: Utterance, text: str) -> None:
        """STT thread: start the agent on a speculative transcript, held until the endpoint
        confirms the same text (see ``edgevox.runtime.speculation``). Only when nothing else is
        running or queued, never for the robot's echo, a stop phrase or nothing speakable."""
        agent = self.agent
        if not self.speculative_reply or not (isinstance(agent, SupportsSpeculation) and agent.supports_speculation):
            return
        if utt.echo or not text or not speakable(text) or self.stop_check.phrase(text):
            return
        q = self.q
        with q.cond:
            old = q.spec_turn
            busy = (q.current is not None and q.current.request is not old) or any(r is not old for r in q.turns)
            final_queued = any(u.turn_id == utt.turn_id for u in q.utterances)
            if q.stopping.is_set() or busy or final_queued:
                return
            ctx = q.loop_context.child(turn_id=utt.turn_id, channel="voice")
            ctx.speculation = Speculation(ctx.cancel_token, label=f"turn {utt.turn_id}")
            request = TurnRequest(utt.turn_id, text, ctx=ctx, speculation=ctx.speculation, samples=utt.audio.shape[0])
            q.spec_turn = request
            q.turns.append(request)
            q.speculative_turns["started"] += 1
            q.cond.notify_all()
        if old is not None:
            q.discard(old)  # an earlier pause of the same utterance: the user went on
        q.publish(SpeculativeReply(turn_id=utt.turn_id, text=text, state="started"))

    # -- transcripts (STT thread, or the caller of submit_text) ------------------------------

    def handle_transcript(
        self,
        turn_id: int,
        text: str,
        *,
        origin: str,
        stt_s: float,
        echo: bool,
        speculative: bool = False,
        spec_turn: TurnRequest | None = None,
        stop_phrase: str | None = None,
    ) -> None:
        """Stop check first (no turn lock, no agent), then queue the turn - or commit the
        speculative turn started on the same text. Runs on the STT or the caller's thread.
        ``stop_phrase``: the phrase the second listen already found in ``text``."""
        q = self.q
        heard_at = time.time()
        phrase = stop_phrase or self.stop_check.phrase(text)
        q.publish(
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
                q.publish(SpeculativeReply(turn_id=turn_id, text=text, state="committed"))
                if spec_turn.speculation.commit():  # releases what it held, in order
                    q.speculative_turns["committed"] += 1
                    return
            q.discard(spec_turn)
        if phrase:
            if turn_id != self._stopped_turn or origin != "voice":
                self.turns.safety_stop(turn_id, text, phrase, heard_at)
            return
        if not text or echo or not speakable(text):
            return  # nothing said, or the robot's own voice under half-duplex
        with q.cond:
            if q.stopping.is_set():
                return
            q.turns.append(TurnRequest(turn_id, text, channel=origin))
            q.cond.notify_all()
