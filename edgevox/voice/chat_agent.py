"""A plain chat agent over an LLM engine: what drives the voice loop when no tool agent is configured.

It is the smallest thing that satisfies the loop's agent contract::

    stream(task: str, ctx: AgentContext) -> Iterator[str]   # text deltas
    truncate_reply(ctx, spoken_text: str) -> None           # optional: after barge-in / stop

Memory: one bounded history per ``ctx.session_id``, so the conversation carries
across turns - never a new session per utterance. The system prompt is always the
first message, byte-identical, so the llama.cpp prompt cache keeps it evaluated
between turns (:meth:`warmup` fills it before the first user speaks).

The history is trimmed in blocks, not as a sliding window: when it would exceed
``max_history_turns`` exchanges, the oldest are dropped down to
``max_history_turns // 2``. A sliding window changes the prompt right after the
system prompt on *every* turn once full, so llama.cpp must re-evaluate the whole
history each time (measured with SmolLM2 on 2 cores: ~230 tokens, ~0.8 s before the
first token instead of ~60 ms). Trimming in blocks pays that once every
``max_history_turns // 2`` turns; between trims the prompt only grows at its end.

After a barge-in the loop calls :meth:`truncate_reply` with only the text that
was actually played; the stored assistant message is replaced by it (or removed
if nothing was heard - no invented "interrupted" notes, which strict chat
templates may reject). Consecutive user messages that result are merged when
the prompt is built, so templates that require alternation still work.

A failed turn leaves no trace: the exchange is stored when the reply ended, was
cancelled or was cut off by the loop (barge-in), never when the LLM raised - a
user message stuck in the history after, say, a context-window error would make
every later turn fail the same way. The request is cleaned first
(:func:`~edgevox.agents.memory.clean_turn_text`: lone surrogates from non-UTF-8
input) and one longer than ``max_input_tokens`` is refused with one clear error.

Threading: ``stream`` runs on the voice loop's turn thread; the history lock makes
``history`` and ``truncate_reply`` safe from other threads. Inference itself is
serialised by the LLM engine (and by ``ctx.llm_lock`` when a runtime shares one).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from edgevox.agents.memory import clean_turn_text
from edgevox.engines.base import LLM
from edgevox.errors import AgentError, Cancelled
from edgevox.runtime.context import AgentContext

DEFAULT_SYSTEM_PROMPT = (
    "You are EdgeVox, a friendly voice assistant running on a robot. "
    "Answer in one or two short spoken sentences. Use plain words: no lists, no markdown, no emoji."
)


class ChatAgent:
    """Streams replies from ``llm`` with per-session memory (see module docstring)."""

    tools: tuple[Any, ...] = ()
    supports_speculation = True
    """The voice loop may start it on a speculative transcript: it publishes nothing, and the
    exchange is stored only once the transcript is confirmed (``ctx.may_act()``)."""

    def __init__(
        self,
        llm: LLM,
        system_prompt: str = DEFAULT_SYSTEM_PROMPT,
        *,
        name: str = "chat",
        max_tokens: int = 120,
        temperature: float = 0.0,
        max_history_turns: int = 8,
        max_input_tokens: int = 512,
    ) -> None:
        if max_history_turns < 1:
            raise ValueError(f"ChatAgent max_history_turns = {max_history_turns}: must be >= 1")
        if max_input_tokens < 1:
            raise ValueError(f"ChatAgent max_input_tokens = {max_input_tokens}: must be >= 1")
        self.max_input_tokens = max_input_tokens
        self.llm = llm
        self.system_prompt = system_prompt
        self.name = name
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.max_history_turns = max_history_turns
        self._lock = threading.Lock()
        self._histories: dict[str, list[dict[str, str]]] = {}

    def warmup(self) -> None:
        """Evaluate the system prompt once so the first turn finds it in the prompt cache."""
        warm = getattr(self.llm, "warmup", None)
        if callable(warm):
            warm(self.system_prompt)  # LlamaCppLLM.warmup(system_prompt) evaluates it into the KV cache
            return
        pieces = self.llm.stream(self._messages("default", "Hi"), max_tokens=1)
        for _ in pieces:
            break
        close = getattr(pieces, "close", None)
        if close is not None:
            close()

    def _history(self, session_id: str) -> list[dict[str, str]]:
        history = self._histories.get(session_id)
        if history is None:
            history = self._histories[session_id] = []
        return history

    def _trim(self, history: list[dict[str, str]]) -> None:
        """Caller holds the lock: drop the oldest exchanges in one block (see module docstring)."""
        if len(history) <= 2 * self.max_history_turns:
            return
        keep = 2 * max(1, self.max_history_turns // 2)
        del history[: len(history) - keep]
        while history and history[0]["role"] != "user":
            history.pop(0)  # start on a user message, as chat templates expect

    def history(self, session_id: str = "default") -> list[dict[str, str]]:
        with self._lock:
            return [dict(m) for m in self._histories.get(session_id, ())]

    def _messages(self, session_id: str, task: str) -> list[dict[str, str]]:
        with self._lock:
            past = list(self._histories.get(session_id, ()))
        merged: list[dict[str, str]] = []
        for msg in [*past, {"role": "user", "content": task}]:
            if merged and merged[-1]["role"] == msg["role"]:
                merged[-1] = {"role": msg["role"], "content": merged[-1]["content"] + "\n" + msg["content"]}
            else:
                merged.append(dict(msg))
        return [{"role": "system", "content": self.system_prompt}, *merged]

    def run(self, task: str, ctx: AgentContext) -> str:
        """The whole reply at once (the agent protocol used by pools, background agents and
        orchestration); the caller's thread runs the LLM."""
        return "".join(self.stream(task, ctx)).strip()

    def stream(self, task: str, ctx: AgentContext) -> Iterator[str]:
        """Yield the reply's text deltas; the exchange is stored when the iterator ends, unless
        the turn failed (see the module docstring)."""
        task = clean_turn_text(task)
        self._check_length(task)
        messages = self._messages(ctx.session_id, task)
        parts: list[str] = []
        lock = ctx.llm_lock if ctx.llm_lock is not None else contextlib.nullcontext()
        keep = False
        try:
            with lock:
                pieces = self.llm.stream(
                    messages, max_tokens=self.max_tokens, temperature=self.temperature, cancel=ctx.cancel_token
                )
                with contextlib.closing(pieces) if hasattr(pieces, "close") else contextlib.nullcontext():
                    for piece in pieces:
                        if ctx.cancel_token.cancelled:
                            break
                        parts.append(piece)
                        yield piece
            keep = True
        except (GeneratorExit, Cancelled):
            keep = True  # cut off by the loop (barge-in, stop): what the user said still happened
            raise
        finally:
            # On a speculative transcript, wait for the endpoint: a discarded guess is never stored.
            if keep and ctx.may_act():
                self._store(ctx.session_id, task, parts)

    def _check_length(self, task: str) -> None:
        limit = self.max_input_tokens
        if len(task) > 16 * limit or self.llm.count_tokens(task) > limit:
            raise AgentError(
                f"the request is too long ({len(task)} characters; at most {limit} tokens, "
                "ChatAgent max_input_tokens): say it in shorter parts"
            )

    def _store(self, session_id: str, task: str, parts: list[str]) -> None:
        with self._lock:
            history = self._history(session_id)
            history.append({"role": "user", "content": task})
            reply = "".join(parts).strip()
            if reply:
                history.append({"role": "assistant", "content": reply})
            self._trim(history)

    def truncate_reply(self, ctx: AgentContext, spoken_text: str) -> None:
        """Replace the last assistant message of ``ctx.session_id`` by what was actually spoken."""
        with self._lock:
            history = self._histories.get(ctx.session_id)
            if not history or history[-1]["role"] != "assistant":
                return
            history.pop()
            if spoken_text.strip():
                history.append({"role": "assistant", "content": spoken_text.strip()})
