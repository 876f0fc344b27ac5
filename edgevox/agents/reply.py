"""Streaming an agent's reply: words go out token by token, machine text never does.

A small model asked for words sometimes writes a tool call, JSON or markup instead
(often a copy of the call it just made). :func:`stream_reply` passes prose through as
it is generated (``ReplyDelta`` events) but holds back a reply that *starts* like
machine text (``{ [ < ```, or the name of one of the agent's tools) until it is
complete; then, after a tool call, machine text or nothing is replaced by the tool's
own words (:func:`~edgevox.agents.tool_calls.fallback_reply`), and otherwise a
``{"reply": ...}`` is unwrapped or the user is asked to say it another way. Nothing
written here runs: only the decoder's calls are executed. So raw call JSON is never
spoken or remembered.
"""

from __future__ import annotations

import re
from collections.abc import Generator, Iterable
from typing import TYPE_CHECKING

from edgevox.agents.base import AgentResult
from edgevox.agents.decoders import GARBLED_CALL_REPLY
from edgevox.agents.events import ReplyDelta
from edgevox.agents.parsing import calls_tool_by_name, looks_like_call, parse_reply
from edgevox.agents.tool_calls import fallback_reply, looks_like_machine_text
from edgevox.runtime.context import AgentContext
from edgevox.runtime.events import Event
from edgevox.voice.speechtext import clean_for_speech

if TYPE_CHECKING:
    from edgevox.agents.llm_agent import LLMAgent

MACHINE_START = "{[<`"
"""A reply whose first visible character is one of these is held back until it is complete."""


def stream_reply(
    agent: LLMAgent, pieces: Iterable[str], ctx: AgentContext, result: AgentResult
) -> Generator[Event, None, None]:
    """The reply from the LLM's ``pieces``, as ``ReplyDelta`` events (see the module docstring).
    ``result.text`` is what was said so far, so a cancelled run still knows it."""
    parts: list[str] = []
    held: list[str] = []
    holding = True  # until the first visible character says prose or machine text
    names = [t.name for t in agent.tools]
    for piece in pieces:
        parts.append(piece)
        text = "".join(parts).strip()
        if holding:
            held.append(piece)
            if not text or text[0] in MACHINE_START or may_be_call(text, names):
                continue
            holding, piece = False, "".join(held)
        result.text = text
        delta = ReplyDelta(agent=agent.name, text=piece)
        ctx.publish(delta)
        yield delta
    if not holding or ctx.cancelled:
        return
    text = "".join(parts).strip()
    if result.tool_calls and (not text or looks_like_machine_text(text)):
        text = fallback_reply(result.tool_calls[-1])
    elif text and looks_like_call(text, agent.tools):
        # Asked for words, the model wrote a call or data: its {"reply": ...} if that is
        # what it is, its words if any are left once the markup is gone, else a question.
        reply = parse_reply(text)
        if reply is not None:
            text = reply
        elif calls_tool_by_name(text, agent.tools) or not re.search(r"\w", clean_for_speech(text)):
            text = GARBLED_CALL_REPLY
    if text:
        yield from agent.emit_text(text, ctx, result)


def may_be_call(text: str, tool_names: Iterable[str]) -> bool:
    """``text`` begins a call of one of ``tool_names`` by name (``move`` ... ``move(``)."""
    match = re.match(r"([A-Za-z_][A-Za-z0-9_]*)\s*(\()?", text)
    if match is None or (match.end() < len(text) and not match.group(2)):
        return False
    name = match.group(1)
    if match.group(2):
        return name in tool_names
    return any(tool_name.startswith(name) for tool_name in tool_names)
