"""What ``edgevox run`` shows while it runs: a live status line, per-turn lines, or JSON events.

:class:`StatusView` is a bus observer. It folds ``voice.*`` events into a small state
(listening / hearing / thinking / speaking, the transcript, the reply so far, the last
turn's latency) and shows it:

* on a terminal, as a one-line ``rich.live.Live`` display refreshed by rich's own thread,
  with each finished turn printed above it (``you: ...`` / ``robot: ...  0.62 s``);
* elsewhere (a pipe, a test, a log file), as plain lines per finished turn.

The line never sticks: an utterance the loop drops (the robot's own voice under the half-duplex
echo guard, ``SpeechEnded.ignored``; an empty or unspeakable transcript; a stop phrase) returns
it at once to ``speaking`` (while a reply plays) or ``listening``, without showing the dropped
words as the user's. :class:`~edgevox.cli.console_view.ConsoleView` (``edgevox console``) builds
on this view.

:class:`JsonEvents` writes every event as one JSON line (``Event.to_dict``) for other
programs (``--json``).

Threading: ``on_event`` runs on whichever thread publishes; a lock guards the state and
the output stream. Latency per turn is measured from the user's last voiced frame
(``SpeechEnded.last_voiced_at``), or from the typed text for text turns, to the first
reply audio (``FirstAudio``), or to the first reply token when there is no audio.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import IO, Any

from rich.console import Console, RenderableType
from rich.live import Live
from rich.text import Text

from edgevox.runtime.events import ErrorEvent, Event


@dataclass
class TurnView:
    turn_id: int = 0
    transcript: str = ""
    reply: str = ""
    started_at: float = 0.0
    """Wall clock of the end of the user's speech (or the typed text)."""
    first_output_at: float = 0.0
    """Wall clock of the first reply audio (or first token when there is no audio)."""
    first_audio: bool = False
    status: str = ""
    you_shown: bool = False
    """``you: ...`` was printed when the turn started (the console), or needs no printing."""
    typed: bool = False
    """A typed line (``voice.transcript`` with ``origin`` text), not heard speech."""
    echo: bool = False
    """The loop ignores this utterance (the robot heard itself, ``SpeechEnded.ignored``)."""


@dataclass
class StatusState:
    phase: str = "starting"
    """starting, listening, hearing, thinking, speaking, stopped."""
    turns: dict[int, TurnView] = field(default_factory=dict)
    last_latency_s: float | None = None
    last_note: str = ""
    speaking_turn: int = 0
    """The turn whose reply is playing (from its ``FirstAudio`` to its ``TurnDone``); 0 = none."""

    def idle_phase(self) -> str:
        """What to show when nothing is being heard or worked on: speaking or listening."""
        return "speaking" if self.speaking_turn else "listening"


class StatusView:
    """Live status (terminal) or plain per-turn lines (pipe). Use as a bus observer."""

    def __init__(self, console: Console | None = None, *, live: bool | None = None, name: str = "robot") -> None:
        self.console = console or Console(stderr=False, highlight=False, soft_wrap=True)
        self.live_mode = self.console.is_terminal if live is None else live
        self.name = name
        self.state = StatusState()
        self.finished_turns = 0
        self._lock = threading.RLock()
        self._live: Live | None = None

    # --- lifecycle (CLI thread) ---------------------------------------------------------------

    def start(self) -> None:
        with self._lock:
            self.state.phase = "listening"
        if self.live_mode:
            self._live = Live(self._render(), console=self.console, refresh_per_second=8, transient=True)
            self._live.start()

    def stop(self) -> None:
        live, self._live = self._live, None
        if live is not None:
            live.stop()

    # --- observer (publisher threads) ---------------------------------------------------------

    def on_event(self, event: Event) -> None:
        kind = event.kind
        if not (kind.startswith("voice.") or isinstance(event, ErrorEvent)):
            return
        with self._lock:
            self._apply(event)
            if self._live is not None:
                self._live.update(self._render())

    def _turn(self, event: Any) -> TurnView:
        turn_id = int(getattr(event, "turn_id", 0) or 0)
        turn = self.state.turns.get(turn_id)
        if turn is None:
            turn = self.state.turns[turn_id] = TurnView(turn_id)
        return turn

    def _apply(self, event: Any) -> None:
        kind = event.kind
        st = self.state
        if kind == "voice.speech_started":
            st.phase = "hearing"
        elif kind == "voice.speech_ended":
            turn = self._turn(event)
            turn.started_at = event.last_voiced_at or event.timestamp
            turn.echo = bool(event.ignored)
            # The robot's own voice (half-duplex) is only checked for a stop phrase: nothing to think about.
            st.phase = st.idle_phase() if turn.echo else "thinking"
        elif kind == "voice.transcript":
            self._transcript(event)
        elif kind == "voice.turn_started":
            st.phase = "thinking"
            turn = self._turn(event)
            if not turn.started_at:  # the robot's own announcement (the stop's confirmation): from now
                turn.started_at = event.timestamp
        elif kind == "voice.token":
            turn = self._turn(event)
            turn.reply += event.text
            if not turn.first_output_at:
                turn.first_output_at = event.timestamp
        elif kind == "voice.audio_out":
            turn = self._turn(event)
            turn.first_audio = True
            turn.first_output_at = event.timestamp
            st.speaking_turn = turn.turn_id
            st.phase = "speaking"
        elif kind == "voice.interrupted":
            st.last_note = "interrupted"
        elif kind == "voice.stopped":
            st.phase = "stopped"
            st.last_note = f"STOP ({event.phrase or event.reason or event.text})"
            line = Text(f"stop ({event.phrase or event.reason or event.text}): ", style="bold red")
            cancelled = [c for c in event.cancelled or [] if not c.startswith("generation ")]
            turns = len(event.cancelled_turns or [])
            cancelled = ([f"{turns} turn{'s' if turns != 1 else ''}"] if turns else []) + cancelled
            line.append("cancelled " + ", ".join(cancelled) if cancelled else "nothing was running")
            if event.ignored:
                line.append(f"; still running, ignoring the stop: {', '.join(event.ignored)}", style="yellow")
            self._print(line)
        elif kind == "voice.turn_done":
            self._finish(event)
        elif kind == "voice.audio_device":
            st.last_note = f"audio input {event.state}" + (f": {event.error}" if event.error else "")
        elif kind == "voice.wake_detected":
            st.last_note = f"wake word {event.phrase or event.model!r}"
        elif kind == "voice.wake_window_closed":
            st.last_note = "asleep: say the wake word"
        elif kind == "voice.input_ended":
            st.last_note = "input ended"
        elif kind == "runtime.error":
            st.last_note = f"error in {event.where}: {event.error}"
            self._print(Text(f"error in {event.where}: {event.error}", style="red"))

    def _transcript(self, event: Any) -> None:
        """A transcript either becomes a turn or is dropped by the loop (the robot's own voice,
        nothing said, nothing speakable): a dropped one leaves the status at once, so the line
        never stays on "thinking" with the robot's own words."""
        from edgevox.voice.transcriber import speakable

        st = self.state
        turn = self._turn(event)
        if event.stop_phrase:
            st.last_note = f"stop phrase {event.stop_phrase!r}"
        if turn.echo or not event.text or not speakable(event.text) or event.stop_phrase:
            st.turns.pop(turn.turn_id, None)
            st.phase = st.idle_phase()
            if turn.echo and not event.stop_phrase:
                st.last_note = "ignored its own voice"
            return
        turn.transcript = event.text
        turn.typed = getattr(event, "origin", "") == "text"
        if not turn.started_at:
            turn.started_at = event.timestamp
        st.phase = "thinking"

    def _finish(self, event: Any) -> None:
        turn, latency = self._close_turn(event)
        reply = event.reply_text or turn.reply
        line = Text()
        if turn.transcript and not turn.you_shown:
            line.append_text(self._you_line(turn.transcript))
            line.append("\n")
        line.append(f"{self.name}: ", style="bold green")
        line.append(reply.strip() or "(no reply)")
        line.append_text(self._turn_suffix(event, turn, latency))
        self._print(line)

    def _close_turn(self, event: Any) -> tuple[TurnView, float | None]:
        """Forget a finished turn; its view and latency (seconds, None when unknown)."""
        st = self.state
        turn = st.turns.pop(int(event.turn_id or 0), None) or TurnView(event.turn_id)
        latency = turn.first_output_at - turn.started_at if turn.first_output_at and turn.started_at else None
        if latency is not None:
            st.last_latency_s = latency
        if st.speaking_turn == turn.turn_id:
            st.speaking_turn = 0
        st.phase = st.idle_phase()
        self.finished_turns += 1
        return turn, latency

    @staticmethod
    def _you_line(transcript: str) -> Text:
        line = Text()
        line.append("you: ", style="bold cyan")
        shown = transcript
        if len(shown) > 300:  # a pasted wall of text: show its start and its size
            shown = f"{shown[:200]}... ({len(transcript)} characters)"
        line.append(shown)
        return line

    @staticmethod
    def _turn_suffix(event: Any, turn: TurnView, latency: float | None) -> Text:
        """``  [0.62 s to audio]`` and, for a turn that did not complete, ``  (stopped)``."""
        line = Text()
        if latency is not None:
            line.append(f"  [{latency:.2f} s{' to audio' if turn.first_audio else ''}]", style="dim")
        if event.status != "completed":
            line.append(f"  ({event.status}{': ' + event.error if event.error else ''})", style="yellow")
        return line

    def _print(self, text: Text) -> None:
        if self._live is not None:
            self._live.console.print(text)
        else:
            self.console.print(text, soft_wrap=True)

    # --- rendering --------------------------------------------------------------------------

    _STYLES = {"listening": "green", "hearing": "cyan", "thinking": "yellow", "speaking": "magenta", "stopped": "red"}

    def _render(self) -> RenderableType:
        """What the live area shows (the console adds the reply being written above it)."""
        return self._status_line()

    def _status_line(self) -> Text:
        st = self.state
        text = Text()
        text.append(f"● {st.phase:<9}", style=self._STYLES.get(st.phase, "white"))
        current = max(st.turns.values(), key=lambda t: t.turn_id, default=None)
        if current is not None and current.transcript:
            text.append(f" you: {_tail(current.transcript, 40)}", style="cyan")
        if current is not None and current.reply:
            text.append(f" {self.name}: {_tail(current.reply, 50)}", style="green")
        if st.last_latency_s is not None:
            text.append(f"  last turn {st.last_latency_s:.2f} s", style="dim")
        if st.last_note:
            text.append(f"  {st.last_note}", style="dim")
        return text

    def render_text(self) -> str:
        """The status line as plain text (for tests and logs)."""
        with self._lock:
            return self._status_line().plain


class JsonEvents:
    """Writes every event as one JSON line (``Event.to_dict``) to ``stream``. Thread-safe.

    One line per piece of the reply: the voice loop republishes each ``agent.reply_delta`` of
    the turn's agent as a ``voice.token`` (with the turn id), on the same thread, right after
    it. So a delta is held until the next event of its thread: the token that repeats it
    replaces it, anything else writes it first. Deltas the
    voice loop does not repeat (a background agent's, a child's) are all written, one event
    late at most; :meth:`flush` writes what is held (the run's end)."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self._lock = threading.Lock()
        self._held: dict[int, dict[str, Any]] = {}
        """Publishing thread -> its last ``agent.reply_delta``, not yet written."""
        self.written = 0

    def on_event(self, event: Event) -> None:
        data = event.to_dict()
        thread = threading.get_ident()
        with self._lock:
            held = self._held.pop(thread, None)
            if data.get("kind") == "agent.reply_delta":
                if held is not None:
                    self._write(held)
                self._held[thread] = data
                return
            if held is not None:
                if not (data.get("kind") == "voice.token" and data.get("text") == held.get("text")):
                    self._write(held)
            self._write(data)

    def flush(self) -> None:
        """Write the deltas still held (call when the run ends)."""
        with self._lock:
            held, self._held = list(self._held.values()), {}
            for data in held:
                self._write(data)

    def _write(self, data: dict[str, Any]) -> None:
        self.stream.write(json.dumps(data, ensure_ascii=False, default=repr) + "\n")
        self.stream.flush()
        self.written += 1


def _tail(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else "…" + text[-(width - 1) :]
