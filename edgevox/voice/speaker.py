"""The speaking half of the voice loop: chunk text -> TTS -> output, and what was really heard.

:class:`Speaker` owns two threads:

* ``edgevox-voice-tts`` takes queued chunks, cleans them for speech, synthesizes
  them, resamples to the output rate and writes them to ``AudioOut`` (which
  returns at once). Audio plays while the LLM is still generating later chunks.
* ``edgevox-voice-playback`` watches ``AudioOut.played_samples`` while a turn has
  audio in flight: it publishes :class:`~edgevox.voice.events.FirstAudio` when the
  turn's first sample has left the output, and sets :attr:`TurnAudio.played_out`
  when the turn's last chunk has finished playing. It polls every
  ``poll_ms`` only while audio is in flight and sleeps on a condition otherwise.

Positions: every written sample gets an absolute output position
(``_write_pos``); a chunk's ``end_pos`` is where it ends. A chunk counts as
*spoken* once ``played_samples >= end_pos`` - only fully played chunks enter the
history after a barge-in or stop.

TTS priority: :meth:`yield_to_tts` lets the turn worker pause the LLM while
this turn's audio is being synthesized and little of it is buffered (2 cores
cannot run both at full speed; the first sound matters more than the next token).

Stale work: :meth:`halt` (barge-in, safety stop) marks the turn halted, clears
the output and drops its queued chunks *under the speaker lock*, and the TTS
thread re-checks ``halted`` under the same lock before every write, so no sample
of a halted turn can reach the output after :meth:`halt` returns.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from edgevox.engines.base import TTS, AudioOut
from edgevox.engines.resample import resample
from edgevox.runtime.context import CancelToken
from edgevox.runtime.events import Event
from edgevox.voice.echo import MAX_ECHO_DELAY_MS, PlaybackReference
from edgevox.voice.events import ChunkSynthesized, FirstAudio
from edgevox.voice.speechtext import clean_for_speech


@runtime_checkable
class Closeable(Protocol):
    """A stream that can be closed early (a generator): TTS pieces, an agent's text deltas."""

    def close(self) -> None: ...


@dataclass
class SpokenChunk:
    text: str
    end_pos: int | None = None
    """Absolute output position after the chunk's last sample; None until fully written."""


@dataclass
class TurnAudio:
    """Speech state of one turn (shared by the turn worker, the TTS thread and the watcher)."""

    turn_id: int
    token: CancelToken
    chunks: list[SpokenChunk] = field(default_factory=list)
    start_pos: int | None = None
    """Absolute output position of the turn's first sample."""
    end_pos: int = 0
    written_at: float = 0.0
    halted: bool = False
    text_done: bool = False
    """The turn worker queued its last chunk and the TTS thread has handled it."""
    first_audio_sent: bool = False
    played_out: threading.Event = field(default_factory=threading.Event)
    """Set when every chunk has been synthesized and played (or the turn had nothing to say)."""

    @property
    def audio_started(self) -> bool:
        return self.start_pos is not None

    def spoken_text(self, played_samples: int) -> str:
        return " ".join(c.text for c in self.chunks if c.end_pos is not None and c.end_pos <= played_samples).strip()


_END = object()


class Speaker:
    """TTS and playback threads for a :class:`~edgevox.voice.loop.VoiceLoop` (see module docstring)."""

    def __init__(
        self,
        tts: TTS,
        audio_out: AudioOut,
        publish: Callable[[Event], None],
        *,
        session_id: str,
        poll_ms: float = 5.0,
        on_error: Callable[[str, BaseException], None],
    ) -> None:
        self.tts = tts
        self.audio_out = audio_out
        self._publish = publish
        self._on_error = on_error
        self.session_id = session_id
        self.poll_s = poll_ms / 1000
        self.reference = PlaybackReference(audio_out.sample_rate_hz)
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._queue: deque[tuple[TurnAudio, int, object]] = deque()
        self._current: TurnAudio | None = None
        self._synthesizing: TurnAudio | None = None
        """The turn whose chunk the TTS thread is synthesizing now."""
        self._write_pos = 0
        self._busy = False
        self._stopping = threading.Event()
        self._threads: list[threading.Thread] = []

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        self._stopping.clear()
        self._threads = [
            threading.Thread(target=self._tts_worker, name="edgevox-voice-tts", daemon=True),
            threading.Thread(target=self._playback_watcher, name="edgevox-voice-playback", daemon=True),
        ]
        for t in self._threads:
            t.start()

    def signal_stop(self) -> None:
        self._stopping.set()
        with self._cond:
            self._queue.clear()
            self._cond.notify_all()

    @property
    def threads(self) -> list[threading.Thread]:
        return list(self._threads)

    # -- called by the turn worker ------------------------------------------------------------

    def begin_turn(self, turn: TurnAudio) -> None:
        with self._cond:
            self._current = turn
            self._cond.notify_all()

    def say(self, turn: TurnAudio, text: str) -> None:
        """Queue one chunk of the turn's reply (returns at once)."""
        with self._cond:
            if turn.halted:
                return
            turn.chunks.append(SpokenChunk(text))
            self._queue.append((turn, len(turn.chunks) - 1, text))
            self._cond.notify_all()

    def end_turn(self, turn: TurnAudio) -> None:
        """No more chunks for this turn; ``turn.played_out`` is set once they all played."""
        with self._cond:
            self._queue.append((turn, -1, _END))
            self._cond.notify_all()

    def yield_to_tts(self, turn: TurnAudio, buffered_ms: float) -> float:
        """Turn worker: block while ``turn`` has a chunk queued or being synthesized and less than
        ``buffered_ms`` of its audio is waiting to play; returns the seconds waited.

        Ends early when the turn is halted or its token cancelled, or the speaker stops.
        """
        if buffered_ms <= 0:
            return 0.0
        threshold = int(self.audio_out.sample_rate_hz * buffered_ms / 1000)
        with self._cond:
            if not self._must_yield(turn, threshold):
                return 0.0  # the common case, once per token: no callback registered
        start = time.perf_counter()

        def wake(_reason: str) -> None:
            with self._cond:
                self._cond.notify_all()

        remove = turn.token.on_cancel(wake)
        try:
            with self._cond:
                while self._must_yield(turn, threshold):
                    # Woken by every write, chunk end, halt and cancel; the timeout only bounds
                    # the wait if an output device stops counting played samples.
                    self._cond.wait(0.5)
        finally:
            remove()
        return time.perf_counter() - start

    def _must_yield(self, turn: TurnAudio, threshold: int) -> bool:
        """Caller holds the lock."""
        return (
            not turn.halted
            and not turn.token.cancelled
            and not self._stopping.is_set()
            and self._tts_pending(turn)
            and self._write_pos - self.audio_out.played_samples < threshold
        )

    def _tts_pending(self, turn: TurnAudio) -> bool:
        """Caller holds the lock: a chunk of ``turn`` is being synthesized or waits for TTS."""
        if self._synthesizing is turn:
            return True
        return any(item[0] is turn and item[2] is not _END for item in self._queue)

    def finish_turn(self, turn: TurnAudio) -> None:
        """The turn worker is done with ``turn`` (after played_out or cancellation)."""
        with self._cond:
            if self._current is turn:
                self._current = None
            self._cond.notify_all()

    # -- called by the capture / STT threads ---------------------------------------------------

    @property
    def speaking(self) -> bool:
        """True while the current turn has audio written and not yet fully played."""
        turn = self._current
        return turn is not None and turn.audio_started and not turn.halted and not turn.played_out.is_set()

    @property
    def current(self) -> TurnAudio | None:
        return self._current

    def halt(self, turn: TurnAudio | None) -> tuple[str, int]:
        """Stop ``turn``'s audio now: clear the output, drop its queued chunks.

        Returns ``(spoken_text, dropped_samples)``: the fully played part of the reply
        and how many samples were cleared unplayed. Safe from any thread.
        """
        with self._cond:
            played = self.audio_out.played_samples
            dropped = self.audio_out.clear()
            # Everything after what has played is gone: future writes start there.
            self._write_pos = max(played, self._write_pos - dropped)
            self.reference.forget_after(self._write_pos)
            if turn is None:
                return "", dropped
            turn.halted = True
            self._queue = deque(item for item in self._queue if item[0] is not turn)
            turn.played_out.set()
            self._cond.notify_all()
            return turn.spoken_text(played), dropped

    def echo_level(self, window_ms: float, delay_samples: int | None) -> float:
        """RMS of the output the microphone hears now: the loudest within ``window_ms`` of the
        position ``delay_samples`` behind the device's (:class:`~edgevox.voice.echo.EchoDelay`);
        with no measured delay, of everything from ``MAX_ECHO_DELAY_MS`` behind on."""
        rate = self.audio_out.sample_rate_hz
        window = int(rate * window_ms / 1000)
        played = self.audio_out.played_samples
        if delay_samples is None:
            span = int(rate * MAX_ECHO_DELAY_MS / 1000) // 2
            return self.reference.level(played - span, window + span)
        return self.reference.level(played - delay_samples, window)

    @property
    def idle(self) -> bool:
        with self._cond:
            return not self._queue and not self._busy

    # -- threads ------------------------------------------------------------------------------

    def _next_item(self) -> tuple[TurnAudio, int, object] | None:
        with self._cond:
            while not self._queue:
                self._busy = False
                if self._stopping.is_set():
                    return None
                self._cond.wait()
            if self._stopping.is_set():
                return None
            self._busy = True
            return self._queue.popleft()

    def _tts_worker(self) -> None:
        """TTS thread: synthesize queued chunks and write them out, dropping halted turns' work."""
        out_rate = self.audio_out.sample_rate_hz
        while True:
            item = self._next_item()
            if item is None:
                return
            turn, index, text = item
            if text is _END:
                with self._cond:
                    turn.text_done = True
                    self._cond.notify_all()
                continue
            if turn.halted or turn.token.cancelled:
                continue  # stale: the turn was interrupted or stopped
            spoken = clean_for_speech(str(text))
            with self._cond:
                self._synthesizing = turn
            try:
                self._synthesize(turn, index, spoken, out_rate)
            except Exception as exc:  # noqa: BLE001 - a TTS failure must not kill the thread
                self._on_error("tts", exc)
                with self._cond:
                    turn.chunks[index].end_pos = None
            finally:
                with self._cond:
                    self._synthesizing = None
                    self._cond.notify_all()

    def _synthesize(self, turn: TurnAudio, index: int, spoken: str, out_rate: int) -> None:
        chunk = turn.chunks[index]
        if not spoken:
            with self._cond:
                chunk.end_pos = self._write_pos  # nothing to say (a code fence...): counts as spoken
            return
        tts_rate = self.tts.sample_rate_hz
        t0 = time.perf_counter()
        start_pos: int | None = None
        pieces = self.tts.synthesize(spoken)
        try:
            for piece in pieces:
                if turn.halted or turn.token.cancelled or self._stopping.is_set():
                    return
                audio = resample(piece, tts_rate, out_rate) if tts_rate != out_rate else piece
                if audio.size == 0:
                    continue
                with self._cond:
                    if turn.halted or turn.token.cancelled:
                        return  # halted while synthesizing: never write stale audio
                    played = self.audio_out.played_samples
                    start = max(self._write_pos, played)
                    start_pos = start if start_pos is None else start_pos
                    self.audio_out.write(audio)
                    self._write_pos = start + audio.shape[0]
                    self.reference.add(start, audio, played)
                    if turn.start_pos is None:
                        turn.start_pos = start
                        turn.written_at = time.time()
                    turn.end_pos = self._write_pos
                    self._cond.notify_all()
            with self._cond:
                if turn.halted:
                    return
                chunk.end_pos = self._write_pos
            self._publish(
                ChunkSynthesized(
                    session_id=self.session_id,
                    turn_id=turn.turn_id,
                    timestamp=time.time(),
                    index=index,
                    samples=chunk.end_pos - start_pos if start_pos is not None else 0,
                    synth_s=time.perf_counter() - t0,
                )
            )
        finally:
            if isinstance(pieces, Closeable):
                pieces.close()  # a generator engine (Piper) releases what it holds now

    def _playback_watcher(self) -> None:
        """Playback thread: first-audio events and end-of-turn detection from ``played_samples``."""
        while not self._stopping.is_set():
            with self._cond:
                if self._stopping.is_set():
                    return  # checked under the lock: a stop signalled since the loop's check has notified already
                turn = self._current
                if turn is None or turn.halted or turn.played_out.is_set():
                    self._cond.wait()
                    continue
                if turn.start_pos is None and not turn.text_done:
                    self._cond.wait()  # nothing written yet: the TTS thread notifies on write
                    continue
            played = self.audio_out.played_samples
            if turn.start_pos is not None and not turn.first_audio_sent and played > turn.start_pos:
                turn.first_audio_sent = True
                self._publish(
                    FirstAudio(
                        session_id=self.session_id,
                        turn_id=turn.turn_id,
                        timestamp=time.time(),
                        written_at=turn.written_at,
                        sample_rate_hz=self.audio_out.sample_rate_hz,
                    )
                )
            with self._cond:
                if turn.text_done and (turn.start_pos is None or played >= turn.end_pos) and not turn.halted:
                    turn.played_out.set()
                    continue
            self._stopping.wait(self.poll_s)
