"""Streaming an agent's reply: words go out token by token, machine text never does.

Every piece goes through :func:`~edgevox.agents.parsing.spoken_text`, the one seam between a
model's raw output and what is said: nothing after an end-of-turn token (``<|im_end|>``,
``</s>`` ...), no template header, special token, tag, tool-call block, JSON or call of a
tool. Prose is passed on as it is generated (``ReplyDelta`` events, each extending the
cleaned text so far; what may still become markup, ``<|im_`` or an open ``{``, waits for
the next piece).

A small model asked for words sometimes writes a tool call, JSON or markup instead (often a
copy of the call it just made). A reply that *starts* like machine text (``{ [ < ```, or the
name of one of the agent's tools) is held back until it is complete; then, after a tool call,
a call or nothing is replaced by the tool's own words
(:func:`~edgevox.agents.tool_calls.fallback_reply`: replies come from the record); a
``{"reply": ...}`` is unwrapped; a call no tool ran for, or nothing left to say, becomes a
request to say it another way (the words next to such a call would claim an action that
never happened). Nothing written here runs: only the decoder's calls are executed. So raw
call JSON and template tokens are never spoken or remembered.
"""

from __future__ import annotations

import re
from collections.abc import Generator, Iterable
from typing import TYPE_CHECKING

from edgevox.agents.base import AgentResult
from edgevox.agents.decoders import GARBLED_CALL_REPLY
from edgevox.agents.events import ReplyDelta
from edgevox.agents.parsing import calls_tool_by_name, parse_reply, parse_tool_calls, spoken_text
from edgevox.agents.tool_calls import fallback_reply
from edgevox.runtime.context import AgentContext
from edgevox.runtime.events import Event

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
    said = ""  # the cleaned text passed on so far
    holding = True  # until the first visible character says prose or machine text
    names = [t.name for t in agent.tools]
    for piece in pieces:
        parts.append(piece)
        raw = "".join(parts)
        if holding:
            head = raw.strip()
            if not head or head[0] in MACHINE_START or may_be_call(head, names):
                continue
            holding = False
        said = yield from _say_more(agent, ctx, result, said, spoken_text(raw, agent.tools, final=False))
    if ctx.cancelled:
        return
    raw = "".join(parts)
    if not holding:
        yield from _say_more(agent, ctx, result, said, spoken_text(raw, agent.tools))
        return
    text = _held_reply(raw, agent, result)
    if text:
        yield from agent.emit_text(text, ctx, result)


def _say_more(
    agent: LLMAgent, ctx: AgentContext, result: AgentResult, said: str, clean: str
) -> Generator[Event, None, str]:
    """Pass on what ``clean`` (the cleaned text so far) adds to ``said``; returns what is said now."""
    if len(clean) <= len(said) or not clean.startswith(said):
        return said  # nothing new (or markup dropped what was still pending): wait for more
    result.text = clean.strip()
    delta = ReplyDelta(agent=agent.name, text=clean[len(said) :])
    ctx.publish(delta)
    yield delta
    return clean


def _held_reply(raw: str, agent: LLMAgent, result: AgentResult) -> str:
    """What to say for a reply that started like machine text (see the module docstring)."""
    reply = parse_reply(raw)
    text = spoken_text(reply if reply is not None else raw, agent.tools)
    names = {t.name for t in agent.tools}
    calls = any(c.name in names for c in parse_tool_calls(raw, agent.tools)) or calls_tool_by_name(raw, agent.tools)
    if result.tool_calls and (calls or not text):
        return fallback_reply(result.tool_calls[-1])
    if calls or (not text and raw.strip()):
        return GARBLED_CALL_REPLY
    return text


def may_be_call(text: str, tool_names: Iterable[str]) -> bool:
    """``text`` begins a call of one of ``tool_names`` by name (``move`` ... ``move(``)."""
    match = re.match(r"([A-Za-z_][A-Za-z0-9_]*)\s*(\()?", text)
    if match is None or (match.end() < len(text) and not match.group(2)):
        return False
    name = match.group(1)
    if match.group(2):
        return name in tool_names
    return any(tool_name.startswith(name) for tool_name in tool_names)
