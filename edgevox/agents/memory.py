"""The one conversation memory of every LLM agent: per session, bounded, cache-friendly.

A :class:`MemoryStore` keeps one :class:`SessionMemory` per session id (the
conversation/thread id of :class:`~edgevox.runtime.context.AgentContext`); one
session never sees another's turns - and never a new session per utterance, so a
voice conversation carries across turns. A *turn* is the list of messages one user
request produced (the request, then the reply). :meth:`MemoryStore.build` assembles
the prompt: the system messages, byte-identical every turn, then the remembered
turns, then the new messages (always kept); consecutive user messages are merged
there, so chat templates that require alternation still work.

**Trimmed in blocks, not as a sliding window.** When a session holds more than
``max_turns`` turns, the oldest are dropped down to half; when the turns no longer
fit the token budget, the oldest are dropped until they take at most half of what
is left. Between trims the prompt only grows at its end, so llama.cpp's prompt cache
keeps the whole prefix (system prompt and history) evaluated. A sliding window
changes the prompt right after the system prompt on *every* turn once full, so the
whole history is re-evaluated each time (measured with SmolLM2 on 2 cores: ~230
tokens, ~0.8 s before the first token instead of ~60 ms; in a soak on 2 busy cores,
6-9 s per reply from the 30th turn on). In blocks that cost comes once every few turns.
Sessions beyond ``max_sessions`` are evicted least recently used, so memory never
grows without bound.

**Barge-in keeps what was actually spoken.** An agent stores an exchange when its
reply ended, was cancelled or was cut off by the voice loop - what the user said
still happened. The loop then calls :meth:`MemoryStore.truncate_reply` with only the
text that was played: the stored assistant message is replaced by it, or removed if
nothing was heard (no invented "interrupted" notes, which strict chat templates may
reject). Only the turn stored by the same run (``owner``) is touched: a later turn
that failed cannot damage an earlier answer.

**A failed turn leaves no trace** (the agent decides: it stores nothing when the LLM
raised - a request stuck in the history after, say, a context-window error would make
every later turn fail the same way). What a user says is checked first:
:func:`clean_turn_text` makes it valid text (lone surrogates from a non-UTF-8
``argv``/stdin would crash tokenisation on every later turn), and
:meth:`MemoryStore.check_turn` refuses a request longer than ``max_input_tokens``
with one clear error, instead of a context-window failure inside the model.

Thread-safe: one lock guards the store (the voice loop's turn thread writes, its
barge-in path truncates).
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from edgevox.errors import AgentError, ArgumentError

Message = dict[str, Any]

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def clean_turn_text(text: str) -> str:
    """``text`` as valid Unicode: bytes smuggled in as surrogates (``"caf\\udce9"`` from a
    Latin-1 terminal read with ``surrogateescape``) are decoded as UTF-8 where they are UTF-8
    and become U+FFFD where not; other lone surrogates become U+FFFD; control characters
    other than tab and newline become spaces."""
    if not isinstance(text, str):
        raise AgentError(f"a request must be text, got {type(text).__name__}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        if _only_escapes(text):
            text = text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        else:
            text = "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in text)
    return _CONTROL.sub(" ", text)


def _only_escapes(text: str) -> bool:
    """True if every surrogate in ``text`` is a ``surrogateescape`` byte (U+DC80..U+DCFF)."""
    return all("\udc80" <= ch <= "\udcff" for ch in text if "\ud800" <= ch <= "\udfff")


def approx_tokens(text: str) -> int:
    """~4 characters per token: the fallback when no tokenizer is given."""
    return len(text) // 4 + 1


class SessionMemory:
    """The turns of one session, oldest first. A turn is the list of messages one user request produced.

    ``owner`` is whatever stored the newest turn (an agent passes the context of its run), so
    :meth:`MemoryStore.truncate_reply` edits a turn only for the run that stored it.
    """

    def __init__(self, max_turns: int = 50) -> None:
        self.turns: list[list[Message]] = []
        self.max_turns = max_turns
        self.owner: object | None = None
        self.trims = 0
        """Blocks of old turns dropped so far (by turn count or token budget)."""

    def add_turn(self, messages: Sequence[Message], owner: object | None = None) -> None:
        self.turns.append([dict(m) for m in messages])
        self.owner = owner
        if len(self.turns) > self.max_turns:  # a block: down to half (see the module docstring)
            del self.turns[: len(self.turns) - (self.max_turns - self.max_turns // 2)]
            self.trims += 1

    def messages(self) -> list[Message]:
        return [dict(m) for turn in self.turns for m in turn]

    def clear(self) -> None:
        self.turns.clear()
        self.owner = None
        self.trims = 0


class MemoryStore:
    """Session-keyed conversation memory with a turn limit and a prompt token budget.

    Args:
        token_budget: Tokens the prompt may take (system + history + new messages).
        count_tokens: The model's tokenizer count (default :func:`approx_tokens`).
        max_sessions: Sessions kept; the least recently used one is evicted first.
        max_turns: Turns kept per session; past it, the oldest are dropped down to half.
        max_input_tokens: The longest request accepted (default half the token budget).
    """

    def __init__(
        self,
        token_budget: int = 1024,
        count_tokens: Callable[[str], int] | None = None,
        *,
        max_sessions: int = 64,
        max_turns: int = 50,
        max_input_tokens: int | None = None,
    ) -> None:
        for what, value in (("token_budget", token_budget), ("max_sessions", max_sessions), ("max_turns", max_turns)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ArgumentError(f"MemoryStore {what} = {value!r}: must be an integer >= 1")
        if max_input_tokens is not None and (
            isinstance(max_input_tokens, bool) or not isinstance(max_input_tokens, int) or max_input_tokens < 1
        ):
            raise ArgumentError(f"MemoryStore max_input_tokens = {max_input_tokens!r}: must be an integer >= 1")
        self.token_budget = token_budget
        self.count_tokens = count_tokens or approx_tokens
        self.max_sessions = max_sessions
        self.max_turns = max_turns
        self.max_input_tokens = max_input_tokens or max(1, token_budget // 2)
        self._sessions: OrderedDict[str, SessionMemory] = OrderedDict()
        self._lock = threading.Lock()

    def session(self, session_id: str) -> SessionMemory:
        with self._lock:
            return self._session(session_id)

    def _session(self, session_id: str) -> SessionMemory:
        """Caller holds the lock."""
        mem = self._sessions.get(session_id)
        if mem is None:
            mem = self._sessions[session_id] = SessionMemory(self.max_turns)
            while len(self._sessions) > self.max_sessions:
                self._sessions.popitem(last=False)
        else:
            self._sessions.move_to_end(session_id)
        return mem

    def add_turn(self, session_id: str, messages: Sequence[Message], *, owner: object | None = None) -> None:
        """Remember one turn; ``owner`` (the storing run's context) is what :meth:`truncate_reply` checks."""
        with self._lock:
            self._session(session_id).add_turn(messages, owner)

    def check_turn(self, text: str) -> None:
        """Raise :class:`AgentError` if ``text`` is longer than ``max_input_tokens``."""
        limit = self.max_input_tokens
        if len(text) > 16 * limit or self.count_tokens(text) > limit:
            raise AgentError(
                f"the request is too long ({len(text)} characters; at most {limit} tokens fit, "
                "MemoryStore max_input_tokens): say it in shorter parts"
            )

    def history(self, session_id: str) -> list[Message]:
        """The remembered messages of ``session_id`` (what the next prompt starts from)."""
        with self._lock:
            mem = self._sessions.get(session_id)
            return mem.messages() if mem is not None else []

    def trims(self, session_id: str) -> int:
        """How many blocks of old turns ``session_id`` has dropped (0: the prompt has only grown)."""
        with self._lock:
            mem = self._sessions.get(session_id)
            return mem.trims if mem is not None else 0

    def truncate_reply(self, session_id: str, spoken_text: str, *, owner: object | None = None) -> bool:
        """After a barge-in: the newest turn's reply becomes ``spoken_text`` (removed if empty).

        Only if that turn ends with a reply and, when ``owner`` is given, was stored by it.
        Returns whether the history changed."""
        spoken = spoken_text.strip()
        with self._lock:
            mem = self._sessions.get(session_id)
            if mem is None or not mem.turns or (owner is not None and mem.owner is not owner):
                return False
            turn = mem.turns[-1]
            if not turn or turn[-1].get("role") != "assistant":
                return False
            turn.pop()
            if spoken:
                turn.append({"role": "assistant", "content": spoken})
            return True

    def _cost(self, messages: Sequence[Message]) -> int:
        return sum(self.count_tokens(str(m.get("content", ""))) + 4 for m in messages)

    def build(self, session_id: str, system: Sequence[Message], new: Sequence[Message]) -> list[Message]:
        """``system`` + the remembered turns within the budget (trimmed in blocks) + ``new``."""
        left = max(0, self.token_budget - self._cost(system) - self._cost(new))
        with self._lock:
            mem = self._session(session_id)
            turns = mem.turns
            costs = [self._cost(turn) for turn in turns]
            total = sum(costs)
            if total > left:  # drop a block: down to half of what is left, so later turns only append
                dropped = 0
                for cost in costs:
                    if total <= left // 2:
                        break
                    total -= cost
                    dropped += 1
                del turns[:dropped]
                mem.trims += 1
            history = [dict(m) for turn in turns for m in turn]
        return [*system, *merge_user_runs([*history, *new])]

    def clear(self, session_id: str | None = None) -> None:
        with self._lock:
            if session_id is None:
                self._sessions.clear()
            else:
                self._sessions.pop(session_id, None)


def merge_user_runs(messages: Sequence[Message]) -> list[Message]:
    """``messages`` with consecutive user messages joined by a newline (a reply removed after a
    barge-in leaves two in a row; many chat templates require user/assistant alternation)."""
    out: list[Message] = []
    for msg in messages:
        if out and msg.get("role") == "user" and out[-1].get("role") == "user":
            out[-1] = {**out[-1], "content": f"{out[-1].get('content', '')}\n{msg.get('content', '')}"}
        else:
            out.append(dict(msg))
    return out
