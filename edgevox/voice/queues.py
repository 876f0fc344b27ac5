"""What the voice loop's threads share: the queues between them and the one condition guarding them.

:class:`LoopQueues` is handed to the capture thread (:mod:`edgevox.voice.capture`),
the STT thread (:mod:`edgevox.voice.transcriber`), the turn thread
(:mod:`edgevox.voice.turns`) and the :class:`~edgevox.voice.loop.VoiceLoop` itself.
Every field below ``cond`` is written only while holding ``cond`` (one lock for all
of them, so "is anything pending?" is one consistent look, as :meth:`VoiceLoop.wait_idle`
needs); the one unlocked read is ``current`` by an interrupt, which takes a snapshot
and re-checks the turn's own state (halted, cancelled). Flow::

    capture --utterances / spec_job--> STT --turns--> turn thread (current)

Speculative turns (``spec_turn``) are decided outside the lock: committing or
discarding a :class:`~edgevox.runtime.speculation.Speculation` runs callbacks, so a
caller takes the turn under the lock (:meth:`take_spec_turn`) and decides it after
releasing it (:meth:`discard`).

Rejected alternative: one lock per queue. ``wait_idle`` and the speculative-turn
checks ("is anything else queued or running?") then need several locks at once, in an
order every thread would have to respect.
"""

from __future__ import annotations

import itertools
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from edgevox.runtime.context import AgentContext
from edgevox.runtime.events import Event
from edgevox.runtime.speculation import DISCARD_REASON, Speculation
from edgevox.voice.events import SpeculativeReply
from edgevox.voice.speaker import TurnAudio


@dataclass
class Utterance:
    """Audio for the STT thread: a final utterance, or the audio so far at a pause (a speculative job)."""

    turn_id: int
    audio: np.ndarray
    echo: bool
    pause_samples: int = 0
    """Final utterance: samples of the pause whose speculative transcript may stand for it.
    Speculative job: always 0."""
    watch: bool = False
    """It began while the robot was talking or something it started was running: the stop
    check listens twice (:mod:`edgevox.voice.stop_check`)."""
    linear: np.ndarray | None = None
    """The same utterance from the echo canceller's linear stage (``echo_guard: aec``, watched
    utterances only; :meth:`edgevox.voice.aec.EchoCanceller.linear_tail`): the second listen
    decodes it too."""


@dataclass
class SpeculativeTranscript:
    """A finished speculative transcription (STT thread only, under the lock)."""

    turn_id: int
    samples: int
    vocabulary: tuple[str, ...]
    text: str
    stt_s: float


@dataclass
class TurnRequest:
    """One queued turn: a transcript or typed text for the agent, or an announcement to say."""

    turn_id: int
    text: str
    say: bool = False  # speak ``text`` as it is (an announcement), without the agent
    ctx: AgentContext | None = None
    """Made in advance for a speculative turn (its token is the speculation's)."""
    speculation: Speculation | None = None
    """Set for a turn started on a speculative transcript: held until committed."""
    samples: int = 0
    """Speculative turn: length of the pause audio its transcript came from."""
    channel: str = "voice"
    """Where the turn came from (``voice``, ``text``, ``ros2``...): the turn's ``ctx.channel``."""

    def run_or_hold(self, action: Callable[[], None]) -> None:
        """Run ``action`` now, or hold it until this speculative turn is committed."""
        if self.speculation is None:
            action()
        else:
            self.speculation.hold(action)


@dataclass
class CurrentTurn:
    """The turn the turn thread is running (``LoopQueues.current``)."""

    request: TurnRequest
    ctx: AgentContext
    audio: TurnAudio


class LoopQueues:
    """The loop's shared state (see the module docstring). ``publish`` must never raise."""

    def __init__(self, publish: Callable[[Event], None]) -> None:
        self.publish = publish
        self.ids = itertools.count(1)
        """Turn ids: one per utterance (at speech start), typed text or announcement."""
        self.stopping = threading.Event()
        self.input_done = threading.Event()
        self.context: AgentContext | None = None
        """The loop's own context (set by ``VoiceLoop.start``); every turn's is its child."""
        self.speculative_turns = {"started": 0, "committed": 0, "discarded": 0}
        self.capture_turn_id = 0
        """The utterance being captured (0: none); endpoint hints for other utterances are stale."""
        self.lock = threading.Lock()
        self.cond = threading.Condition(self.lock)
        # -- guarded by cond ----------------------------------------------------------------
        self.utterances: deque[Utterance] = deque()
        self.spec_job: Utterance | None = None
        """The latest pause's audio, waiting for speculative STT (final utterances go first)."""
        self.spec_result: SpeculativeTranscript | None = None
        self.turns: deque[TurnRequest] = deque()
        self.spec_turn: TurnRequest | None = None
        """The undecided speculative turn (queued or running), if any."""
        self.current: CurrentTurn | None = None
        self.stt_busy = False

    @property
    def loop_context(self) -> AgentContext:
        if self.context is None:
            raise RuntimeError("the voice loop's context is made by VoiceLoop.start()")
        return self.context

    def busy(self) -> bool:
        """Anything queued, transcribing or running (caller holds ``cond``)."""
        return bool(
            self.utterances or self.spec_job is not None or self.turns or self.stt_busy or self.current is not None
        )

    def take_spec_turn(self) -> TurnRequest | None:
        """Remove and return the undecided speculative turn, if any. Caller holds the lock and
        commits or discards it after releasing the lock (cancelling runs callbacks)."""
        spec, self.spec_turn = self.spec_turn, None
        return spec

    def discard(self, request: TurnRequest, reason: str = DISCARD_REASON) -> None:
        """Drop a speculative turn that is still undecided (caller does not hold the lock)."""
        if request.speculation is not None and not request.speculation.decided:
            request.speculation.discard(reason)
            self.speculative_turns["discarded"] += 1
            self.publish(SpeculativeReply(turn_id=request.turn_id, text=request.text, state="discarded"))

    def discard_speculation(self, turn_id: int | None = None) -> None:
        """Drop the speculative turn (of ``turn_id``; any for None): speech resumed after the pause."""
        with self.cond:
            spec = self.spec_turn
            if spec is None or (turn_id is not None and spec.turn_id != turn_id):
                return
            self.spec_turn = None
        self.discard(spec)

    def drop_speculation(self) -> None:
        """Forget the pending speculative job, its result and turn (a device reopen)."""
        with self.cond:
            self.spec_job = None
            self.spec_result = None
            spec = self.take_spec_turn()
        if spec is not None:
            self.discard(spec)
