"""Per-session conversation memory with a token budget.

A :class:`MemoryStore` keeps one :class:`SessionMemory` per session id (the
conversation/thread id of :class:`~edgevox.runtime.context.AgentContext`); one
session never sees another's turns. :meth:`MemoryStore.build` assembles the prompt:
the system messages are always kept, then recent *whole turns* within the token
budget, then the new messages, which are always kept.

The history is trimmed in blocks, not as a sliding window: when it no longer fits,
the oldest turns are dropped until it takes at most half of what is left, and later
turns start from there. A sliding window changes the prompt right after the system
prompt on every turn once the budget is full, so llama.cpp re-evaluates the whole
history each turn (measured in a soak on 2 busy cores: ~750 tokens, 6-9 s per reply
from the 30th turn on, against ~0.8 s while the prefix was cached). In blocks, that
cost comes once every few turns and the prompt grows only at its end in between. Sessions beyond ``max_sessions`` are evicted least recently used, and
each session keeps at most ``max_turns`` turns, so memory never grows without bound.

A turn enters the history only when it succeeded (the agent decides), and what a
user says is checked first: :func:`clean_turn_text` makes it valid text (lone
surrogates from a non-UTF-8 ``argv``/stdin would crash tokenisation on every
later turn), and :meth:`MemoryStore.check_turn` rejects a request that alone
takes more than half the token budget with one clear error, instead of a
context-window failure inside the model.

Thread-safe: one lock guards the store.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from edgevox.errors import AgentError

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
    """The turns of one session. A turn is the list of messages one user request produced."""

    def __init__(self, max_turns: int = 50) -> None:
        self.turns: list[list[Message]] = []
        self.max_turns = max_turns
        self.start = 0
        """Index of the oldest turn the prompt still shows (moved in blocks by :meth:`MemoryStore.build`)."""

    def add_turn(self, messages: Sequence[Message]) -> None:
        self.turns.append([dict(m) for m in messages])
        dropped = max(0, len(self.turns) - self.max_turns)
        del self.turns[:dropped]
        self.start = max(0, self.start - dropped)

    def messages(self) -> list[Message]:
        return [m for turn in self.turns for m in turn]

    def clear(self) -> None:
        self.turns.clear()
        self.start = 0


class MemoryStore:
    """Session-keyed conversation memory with a prompt token budget."""

    def __init__(
        self,
        token_budget: int = 1024,
        count_tokens: Callable[[str], int] | None = None,
        *,
        max_sessions: int = 64,
        max_turns: int = 50,
    ) -> None:
        if token_budget <= 0:
            raise ValueError(f"MemoryStore token_budget = {token_budget}: must be > 0")
        self.token_budget = token_budget
        self.count_tokens = count_tokens or approx_tokens
        self.max_sessions = max_sessions
        self.max_turns = max_turns
        self._sessions: OrderedDict[str, SessionMemory] = OrderedDict()
        self._lock = threading.Lock()

    def session(self, session_id: str) -> SessionMemory:
        with self._lock:
            mem = self._sessions.get(session_id)
            if mem is None:
                mem = self._sessions[session_id] = SessionMemory(self.max_turns)
                while len(self._sessions) > self.max_sessions:
                    self._sessions.popitem(last=False)
            else:
                self._sessions.move_to_end(session_id)
            return mem

    def add_turn(self, session_id: str, messages: Sequence[Message]) -> None:
        mem = self.session(session_id)
        with self._lock:
            mem.add_turn(messages)

    def check_turn(self, text: str) -> None:
        """Raise :class:`AgentError` if ``text`` alone costs more than half the token budget."""
        limit = self.token_budget // 2
        if len(text) > 16 * limit or self.count_tokens(text) > limit:
            raise AgentError(
                f"the request is too long ({len(text)} characters; at most about {limit} tokens fit): "
                "say it in shorter parts"
            )

    def history(self, session_id: str) -> list[Message]:
        mem = self.session(session_id)
        with self._lock:
            return mem.messages()

    def _cost(self, messages: Sequence[Message]) -> int:
        return sum(self.count_tokens(str(m.get("content", ""))) + 4 for m in messages)

    def build(self, session_id: str, system: Sequence[Message], new: Sequence[Message]) -> list[Message]:
        """``system`` + recent whole turns within the budget (trimmed in blocks) + ``new``."""
        mem = self.session(session_id)
        left = max(0, self.token_budget - self._cost(system) - self._cost(new))
        with self._lock:
            turns = mem.turns
            start = min(mem.start, len(turns))
            costs = [self._cost(turn) for turn in turns[start:]]
            total = sum(costs)
            if total > left:  # drop a block: down to half of what is left, so later turns only append
                for cost in costs:
                    if total <= left // 2:
                        break
                    total -= cost
                    start += 1
                mem.start = start
            history = [m for turn in turns[start:] for m in turn]
        return [*system, *history, *new]

    def clear(self, session_id: str | None = None) -> None:
        with self._lock:
            if session_id is None:
                self._sessions.clear()
            else:
                self._sessions.pop(session_id, None)
