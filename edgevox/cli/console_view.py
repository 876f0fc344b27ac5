"""What ``edgevox console`` shows (and ``edgevox run`` on a terminal): the conversation as it happens.

:class:`ConsoleView` is the :class:`~edgevox.cli.status.StatusView` (the status line that
never sticks) plus what a robot builder watches while trying an application:

* each reply streamed word by word as the agent writes it (``voice.token``), one line per
  reply, ended by its latency (``[0.62 s to audio]``);
* ``you: ...`` as soon as a heard or typed line becomes a turn;
* tool calls as they happen: ``-> move(distance_m=1.0)``, then ``<- move: moved 1.0 m``,
  ``move failed: ...`` or ``move cancelled``;
* skills: started, feedback ticks, succeeded / cancelled / failed;
* the safety stop (what it cancelled), followed by its spoken confirmation (``Stopped.``,
  ``safety.confirmation``) as the robot's next line;
* background agents' replies as ``[patrol] ...`` (an ``agent.reply`` published by an agent
  that a ``background_agents`` entry runs, and that is not the foreground turn's reply).

Two renderings, chosen like the status view's: on a terminal (``live``) the reply being
written is shown in the live area under the finished lines and printed above it when the
turn ends; elsewhere (a pipe, a test) each token is written to the stream as it comes and
flushed, so another program reads the reply as it grows. A line of another kind (a tool
call, a background agent's reply) arriving mid-reply ends the reply's line; the reply goes on
in a new ``robot:`` line that starts with all of it so far, so the last line of every reply is
whole (with its latency).

Typing on a terminal (``--text`` with a terminal on both sides) is the third rendering, the
*prompt*: the terminal already shows what the user typed after ``you> ``, so typed lines are not
echoed again; replies are printed whole when their turn ends (a token streamed into the line
being typed would corrupt it); and every line printed replaces the prompt line (carriage return,
erase line) and draws the prompt again under it, so output always lands above the input line.
Characters typed but not yet entered stay in the terminal's line buffer (Enter still sends
them) though the redraw hides them; Ctrl-R shows them again. (prompt_toolkit's ``patch_stdout``
would keep them visible, but it is not a dependency.)

Threading: like :class:`~edgevox.cli.status.StatusView`, ``on_event`` runs on whichever
thread publishes and holds one lock while it updates the state and writes.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rich.console import Console, Group, RenderableType
from rich.control import strip_control_codes
from rich.text import Text

from edgevox.cli.status import StatusView, TurnView
from edgevox.runtime.events import Event

if TYPE_CHECKING:
    from edgevox.config.schema import AppConfig

FEEDBACK_EVERY_S = 1.0
"""A running skill's feedback is printed at most this often (the status line shows every tick)."""
_SKILL_DONE = {"succeeded": "green", "cancelled": "yellow", "failed": "red"}


class ConsoleView(StatusView):
    """Streams replies and shows tools, skills, stops and background agents (see the module)."""

    def __init__(
        self,
        console: Console | None = None,
        *,
        live: bool | None = None,
        name: str = "robot",
        background: Mapping[str, str] | None = None,
        prompt: str = "",
    ) -> None:
        super().__init__(console, live=False if prompt else live, name=name)
        self.prompt = prompt
        """Typed input on this terminal: the input line's prompt (``you> ``); "" = no prompt mode."""
        self._prompt_shown = False
        """The prompt is on the screen's last line (a printed line must erase it first)."""
        self.background = dict(background or {})
        """Agent name -> the background agent (``background_agents[].name``) that runs it."""
        self._open_turn = 0
        """Plain mode: the turn whose reply line is being written (0 = no line open)."""
        self._feedback_at: dict[str, float] = {}
        """Goal id -> when its last feedback line was printed (one a second at most; the live
        status line always shows the latest)."""
        self._streamed: set[int] = set()
        """Plain mode: turns of which some reply was written (their line ends with the latency)."""

    # --- observer -----------------------------------------------------------------------------

    def on_event(self, event: Event) -> None:
        kind = event.kind
        if not kind.startswith("agent."):
            super().on_event(event)
            return
        with self._lock:
            self._agent_event(event)
            if self._live is not None:
                self._live.update(self._render())

    def _apply(self, event: Any) -> None:
        kind = event.kind
        if kind == "voice.turn_started":
            turn = self._turn(event)
            if turn.transcript and not (self.prompt and turn.typed):  # typed here: on the screen already
                self._line(self._you_line(turn.transcript))
            turn.you_shown = bool(turn.transcript)
        super()._apply(event)
        if kind == "voice.token" and not self.live_mode and not self.prompt:
            self._stream_token(self._turn(event), event.text)

    # --- replies, streamed ----------------------------------------------------------------------

    def _stream_token(self, turn: TurnView, text: str) -> None:
        """Plain mode: write the new piece of the reply now (and flush). After another line cut
        the reply's line, it starts again with the whole reply so far, so the last line of every
        reply holds all of it."""
        if self._open_turn == turn.turn_id:
            self._write_plain(text)
            return
        self._end_open_line()
        so_far = turn.reply.lstrip()  # the status view has added this piece already
        if not so_far:
            return
        self._write(Text(f"{self.name}: ", style="bold green"))
        self._write_plain(so_far)
        self._open_turn = turn.turn_id
        self._streamed.add(turn.turn_id)

    def _finish(self, event: Any) -> None:
        turn_id = int(event.turn_id or 0)
        if self.live_mode or turn_id not in self._streamed:
            super()._finish(event)  # nothing streamed: the whole reply line at once
            return
        self._streamed.discard(turn_id)
        turn, latency = self._close_turn(event)
        if self._open_turn != turn_id:  # another line came after its last words: the whole reply again
            self._end_open_line()
            self._write(Text(f"{self.name}: ", style="bold green"))
            self._write_plain((event.reply_text or turn.reply).strip())
        self._write(self._turn_suffix(event, turn, latency))
        self._write_plain("\n")
        self._open_turn = 0

    # --- tools, skills, background agents -----------------------------------------------------

    def _agent_event(self, event: Any) -> None:
        kind = event.kind
        if kind == "agent.tool_call_started":
            self._line(Text(f"  -> {event.tool}({_arguments(event.arguments)})", style="blue"))
        elif kind == "agent.tool_call_finished":
            if event.ok:
                self._line(Text(f"  <- {event.tool}: {_short(event.result) or 'done'}", style="blue"))
            elif event.error_kind == "cancelled":
                self._line(Text(f"  <- {event.tool} cancelled", style="yellow"))
            else:
                self._line(Text(f"  <- {event.tool} failed: {_short(event.error)}", style="red"))
        elif kind == "agent.skill_state":
            self._skill(event)
        elif kind == "agent.reply":
            self._background_reply(event)

    def _skill(self, event: Any) -> None:
        state = event.state
        if state == "running" and event.feedback is not None:
            feedback = _short(_plain(event.feedback), 60)
            self.state.last_note = f"{event.skill}: {feedback}"
            last = self._feedback_at.get(event.goal_id)
            if last is None or event.timestamp - last >= FEEDBACK_EVERY_S:
                self._feedback_at[event.goal_id] = event.timestamp
                self._line(Text(f"  ~ {event.skill}: {feedback}", style="blue"))
            return
        if state == "running":
            self._line(Text(f"  ~ {event.skill} started", style="blue"))
        elif state in _SKILL_DONE:
            self._feedback_at.pop(event.goal_id, None)
            if self.state.last_note.startswith(f"{event.skill}: "):
                self.state.last_note = ""
            detail = f": {_short(event.error)}" if event.error else ""
            self._line(Text(f"  ~ {event.skill} {state}{detail}", style=_SKILL_DONE[state]))

    def _background_reply(self, event: Any) -> None:
        owner = self.background.get(event.source)
        if owner is None or not (event.text.strip() or event.error):
            return
        current = max(self.state.turns.values(), key=lambda t: t.turn_id, default=None)
        if current is not None and current.reply.strip() and current.reply.strip() == event.text.strip():
            return  # the same agent answering the foreground turn: that reply is shown already
        line = Text(f"[{owner}] ", style="bold magenta")
        line.append(event.text.strip() or f"failed: {event.error}", style="" if event.ok else "red")
        self._line(line)

    # --- output -------------------------------------------------------------------------------

    def _line(self, text: Text) -> None:
        """A whole line, after ending a reply line that is being streamed."""
        self._print(text)

    def _print(self, text: Text) -> None:
        self._end_open_line()
        if self._prompt_shown:
            self.console.file.write("\r\x1b[K")  # the line goes where the prompt was
            self._prompt_shown = False
        super()._print(text)
        if self.prompt:
            self._draw_prompt()

    # --- the prompt (typed input on a terminal) ------------------------------------------------

    def show_prompt(self) -> None:
        """The input line's prompt, unless it is on the screen already (the reader's thread, at
        the start and after each entered line)."""
        with self._lock:
            if self.prompt and not self._prompt_shown:
                self._draw_prompt()

    def line_entered(self) -> None:
        """The user pressed Enter: the terminal moved to a new, empty line (the reader's thread)."""
        with self._lock:
            self._prompt_shown = False

    def _draw_prompt(self) -> None:
        self._write(Text(self.prompt, style="bold cyan"))
        self._prompt_shown = True

    def stop(self) -> None:
        with self._lock:
            if self._prompt_shown:  # leave no prompt behind on exit
                self.console.file.write("\r\x1b[K")
                self.console.file.flush()
                self._prompt_shown = False
        super().stop()

    def _end_open_line(self) -> None:
        if self._open_turn:
            self._write_plain("\n")
            self._open_turn = 0

    def _write(self, text: Text) -> None:
        self.console.print(text, end="", soft_wrap=True)
        self.console.file.flush()

    def _write_plain(self, text: str) -> None:
        """A piece of a reply: written as is (rich's rendering costs ~0.1 ms a token, on the
        turn thread), without control characters a model could emit (escape sequences)."""
        self.console.file.write(strip_control_codes(text))
        self.console.file.flush()

    def _render(self) -> RenderableType:
        status = self._status_line()
        current = max(self.state.turns.values(), key=lambda t: t.turn_id, default=None)
        if not self.live_mode or current is None or not current.reply.strip():
            return status
        reply = Text(f"{self.name}: ", style="bold green")
        reply.append(current.reply.strip())
        return Group(reply, status)


def view_for(config: AppConfig, args: argparse.Namespace, out: Console) -> StatusView:
    """The view of a run: the console's (``edgevox console``, or ``run`` on a terminal when
    it is not answering one ``--say`` or a WAV), else the status view's per-turn lines, as
    ``run`` has always printed into a pipe. The live area is used only for microphone input on a
    terminal: a typed line would be redrawn under the cursor, so typing on a terminal gets the
    prompt rendering (see the module)."""
    source = config.audio.input.source
    headless = args.say is not None or source == "file"
    live = out.is_terminal and source == "device" and not headless
    if getattr(args, "console", False) or (out.is_terminal and not headless):
        prompt = PROMPT if source == "text" and not headless and out.is_terminal and _stdin_is_terminal() else ""
        return ConsoleView(out, name=config.name, live=live, background=background_agents(config), prompt=prompt)
    return StatusView(out, name=config.name, live=None if not (args.say or source != "device") else False)


PROMPT = "you> "
"""The input line's prompt when typing on a terminal."""


def _stdin_is_terminal() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (ValueError, OSError):  # closed or detached
        return False


def background_agents(config: AppConfig) -> dict[str, str]:
    """Agent name -> the name(s) of the background agents that run it (``patrol``, ``a/b``)."""
    out: dict[str, str] = {}
    for bg in config.background_agents:
        out[bg.agent] = f"{out[bg.agent]}/{bg.name}" if bg.agent in out else bg.name
    return out


def _arguments(arguments: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={json.dumps(v, ensure_ascii=False, default=repr)}" for k, v in arguments.items())


def _plain(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=repr)


def _short(text: str, width: int = 160) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"
