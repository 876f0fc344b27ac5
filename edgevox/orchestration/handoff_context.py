"""What travels with a handoff besides the summary, and what the user hears when it happens.

* :class:`HandoffOptions`: how many recent turns travel with a handoff (``history_turns``),
  how many handoffs one turn may make (``max_handoffs_per_turn``), and the short notification the user hears when one is accepted (``notify``,
  ``notification``: ``"Connecting you with {target}..."``, OmniForge), naming the target by
  its friendly name (``names``, else its name in words: ``billing_agent`` -> "billing agent").
* :class:`Transcript`: the session's recent user/assistant messages, kept in the
  :class:`~edgevox.orchestration.state.SessionStore` (so a Swarm's per-turn handler and a
  Coordinator's long-lived one see the same thing, and sessions never mix). The
  :class:`~edgevox.orchestration.handoff.HandoffHandler` fills it from
  ``begin_turn(session, text=...)`` and ``commit(session, reply=...)`` and puts its newest
  messages on each handoff (:attr:`~edgevox.agents.base.Handoff.recent`).

The YAML is ``orchestration.handoff`` (:class:`~edgevox.orchestration.config.HandoffSection`).
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from edgevox.agents.base import HANDOFF_HISTORY_TURNS
from edgevox.agents.tool_calls import DEFAULT_MAX_HANDOFFS_PER_TURN, check_max_handoffs
from edgevox.errors import ArgumentError
from edgevox.orchestration.state import SessionStore

DEFAULT_HISTORY_TURNS = HANDOFF_HISTORY_TURNS
"""Recent messages (user and assistant, each one turn) that travel with a handoff."""
MAX_HISTORY_TURNS = 50
DEFAULT_NOTIFICATION = "Connecting you with {target}..."
NOTIFICATION_FIELDS = frozenset({"target", "source", "reason"})
HUMAN_NAME = "a person"
TRANSCRIPT_RECORD = "handoff/transcript"


@dataclass(frozen=True)
class HandoffOptions:
    """What a handoff carries and announces. Raises :class:`ArgumentError` for a bad value."""

    history_turns: int = DEFAULT_HISTORY_TURNS
    """Recent user/assistant messages given to the target with the summary (0: summary only)."""
    notify: bool = True
    """Say :attr:`notification` when a handoff is accepted, before the target speaks."""
    notification: str = DEFAULT_NOTIFICATION
    """``{target}`` is the target's friendly name; ``{source}`` and ``{reason}`` may be used too."""
    names: Mapping[str, str] = field(default_factory=dict)
    """Friendly names of agents for the notification (``{"billing_agent": "our billing team"}``)."""
    max_handoffs_per_turn: int = DEFAULT_MAX_HANDOFFS_PER_TURN
    """Handoffs one user turn may make, over every agent that had it (1 to 32); one more ends the
    turn with :data:`~edgevox.agents.tool_calls.HANDOFF_LIMIT_REPLY`."""

    def __post_init__(self) -> None:
        check_max_handoffs(self.max_handoffs_per_turn, "handoff max_handoffs_per_turn")
        turns = self.history_turns
        if isinstance(turns, bool) or not isinstance(turns, int) or not 0 <= turns <= MAX_HISTORY_TURNS:
            raise ArgumentError(
                f"handoff history_turns = {turns!r}: must be an integer from 0 to {MAX_HISTORY_TURNS} "
                "(recent messages given to the target)"
            )
        if not isinstance(self.notification, str):
            raise ArgumentError(f"handoff notification = {self.notification!r}: must be text")
        try:
            used = {name for _, name, _, _ in string.Formatter().parse(self.notification) if name is not None}
        except ValueError as exc:
            raise ArgumentError(f"handoff notification {self.notification!r}: {exc}; write {{target}}") from None
        unknown = used - NOTIFICATION_FIELDS
        if unknown:
            raise ArgumentError(
                f"handoff notification {self.notification!r}: unknown field(s) {sorted(unknown)}; "
                f"use {', '.join('{' + f + '}' for f in sorted(NOTIFICATION_FIELDS))}"
            )
        if self.notify and not self.notification.strip():
            raise ArgumentError("handoff notification is empty while notify is on; write one or set notify: false")
        object.__setattr__(self, "names", dict(self.names))

    def display_name(self, agent: str) -> str:
        """The agent's friendly name: from :attr:`names`, else its name in words."""
        if agent in self.names:
            return self.names[agent]
        if agent == "human":
            return HUMAN_NAME
        return " ".join(agent.replace("_", " ").replace("-", " ").split())

    def notice(self, *, target: str, source: str = "", reason: str = "") -> str:
        """The notification for a handoff to ``target`` ("" when :attr:`notify` is off)."""
        if not self.notify:
            return ""
        return self.notification.format(
            target=self.display_name(target), source=self.display_name(source) if source else "", reason=reason
        ).strip()


class Transcript:
    """The recent messages of each session, kept in a :class:`SessionStore` record.

    ``keep`` messages are kept per session (the oldest dropped first). The current turn's user
    message is marked, so a same-turn handoff (whose target is given that message as its task)
    can leave it out.
    """

    def __init__(self, store: SessionStore, keep: int) -> None:
        self.store = store
        self.keep = max(1, keep)

    def _load(self, session_id: str) -> dict[str, Any]:
        record = self.store.get_record(session_id, TRANSCRIPT_RECORD) or {}
        return {"messages": list(record.get("messages", [])), "current": record.get("current")}

    def _save(self, session_id: str, record: dict[str, Any]) -> None:
        messages = record["messages"]
        drop = max(0, len(messages) - self.keep)
        current = record["current"]
        self.store.put_record(
            session_id,
            TRANSCRIPT_RECORD,
            {
                "messages": messages[drop:],
                "current": None if current is None or current < drop else current - drop,
            },
        )

    def user(self, session_id: str, text: str) -> None:
        """The user's words that open a turn."""
        text = text.strip()
        with self.store.lock:
            record = self._load(session_id)
            record["messages"].append({"role": "user", "content": text})
            record["current"] = len(record["messages"]) - 1
            self._save(session_id, record)

    def reply(self, session_id: str, text: str) -> None:
        """An agent's answer in the current turn."""
        text = text.strip()
        if not text:
            return
        with self.store.lock:
            record = self._load(session_id)
            record["messages"].append({"role": "assistant", "content": text})
            self._save(session_id, record)

    def recent(self, session_id: str, n: int, *, before_current: bool = False) -> tuple[str, ...]:
        """The last ``n`` messages as ``"role: text"``, oldest first; ``before_current``: only
        those before the current turn's user message."""
        if n <= 0:
            return ()
        record = self._load(session_id)
        messages = record["messages"]
        if before_current and record["current"] is not None:
            messages = messages[: record["current"]]
        return tuple(f"{m['role']}: {m['content']}" for m in messages[-n:])
