"""Agents that act: tools, skills, hooks, memory and handoffs (see ``docs/agents.md``); the
composition layer (workflows, strategies) is ``edgevox.orchestration``.

The runtime names below are re-exported so that ``from edgevox.agents import
Blackboard, BackgroundAgent, AgentPool, ...`` keeps working as in the existing
EdgeVox documentation; they are defined in ``edgevox.runtime``. Heavy engines are
never imported here.
"""

from edgevox.agents.base import Agent, AgentBase, AgentResult, AgentStream
from edgevox.agents.decoders import (
    Decision,
    DecisionRequest,
    FreeTextDecoder,
    GrammarDecoder,
    SchemaFirstDecoder,
    ToolDecoder,
    TwoStageDecoder,
)
from edgevox.agents.events import (
    AgentReply,
    AgentStarted,
    HandoffEvent,
    ReplyDelta,
    SkillStateEvent,
    ToolCallFinished,
    ToolCallStarted,
)
from edgevox.agents.grammar import arguments_grammar, choice_grammar, schema_grammar, tool_call_grammar
from edgevox.agents.hooks import CONTINUE, End, Hook, HookPoint, Replace, hook
from edgevox.agents.llm_agent import LLMAgent
from edgevox.agents.memory import MemoryStore, SessionMemory
from edgevox.agents.parsing import parse_reply, parse_tool_calls
from edgevox.agents.resolver import Proposal, SchemaResolver
from edgevox.agents.run import run_child, stream_child
from edgevox.agents.skills import GoalHandle, GoalState, Skill, SkillExecutor, skill
from edgevox.agents.tools import Tool, ToolBox, ToolCall, ToolResult, build_tool, tool

# --- runtime re-exports (kept in sync with tests/test_public_api.py) ---
from edgevox.runtime.background import EXIT, BackgroundAgent
from edgevox.runtime.blackboard import Blackboard
from edgevox.runtime.bus import EventBus
from edgevox.runtime.context import AgentContext, CancelToken
from edgevox.runtime.debounce import debounce_trigger
from edgevox.runtime.events import AgentEvent
from edgevox.runtime.messages import AgentMessage, reply, request, send_message, subscribe_inbox
from edgevox.runtime.pool import AgentPool
from edgevox.runtime.runtime import Runtime
from edgevox.runtime.supervisor import RestartSupervisor

# The runtime names first, then the agent names (tests/test_public_api.py pins both).
__all__ = [
    "EXIT",
    "AgentContext",
    "AgentEvent",
    "AgentMessage",
    "AgentPool",
    "BackgroundAgent",
    "Blackboard",
    "CancelToken",
    "EventBus",
    "Runtime",
    "RestartSupervisor",
    "debounce_trigger",
    "reply",
    "request",
    "send_message",
    "subscribe_inbox",
    "CONTINUE",
    "Agent",
    "AgentBase",
    "AgentReply",
    "AgentResult",
    "AgentStarted",
    "AgentStream",
    "Decision",
    "DecisionRequest",
    "End",
    "FreeTextDecoder",
    "GoalHandle",
    "GoalState",
    "GrammarDecoder",
    "HandoffEvent",
    "Hook",
    "HookPoint",
    "LLMAgent",
    "MemoryStore",
    "Proposal",
    "Replace",
    "ReplyDelta",
    "SchemaFirstDecoder",
    "SchemaResolver",
    "SessionMemory",
    "Skill",
    "SkillExecutor",
    "SkillStateEvent",
    "Tool",
    "ToolBox",
    "ToolCall",
    "ToolCallFinished",
    "ToolCallStarted",
    "ToolDecoder",
    "ToolResult",
    "TwoStageDecoder",
    "arguments_grammar",
    "build_tool",
    "choice_grammar",
    "hook",
    "parse_reply",
    "parse_tool_calls",
    "run_child",
    "schema_grammar",
    "skill",
    "stream_child",
    "tool",
    "tool_call_grammar",
]
