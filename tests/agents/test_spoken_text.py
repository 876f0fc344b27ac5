"""Nothing of a model's markup is ever spoken: ``spoken_text`` is the one seam between a model's
raw output and what an agent says, whichever decoder decided and whether the reply streams.

Was: a reply ``'Sure, going to the kitchen!<|im_end|>\\n<|im_start|>user\\nthanks'`` reached the
voice as "Sure, going to the kitchen! user thanks" (and the reply text, the console and the
memory kept every token); ``'{"name": "drive_to", ...} Sure, going to the kitchen!<|im_end|>'``
was said whole, claiming a drive that never ran. The raw outputs below are the shapes small
models (SmolLM2, Qwen, Llama 3, Gemma, Mistral, Phi) really emit."""

from __future__ import annotations

import re
from typing import Literal

import pytest

from edgevox.agents.decoders import GARBLED_CALL_REPLY, FreeTextDecoder, GrammarDecoder, TwoStageDecoder
from edgevox.agents.events import ReplyDelta
from edgevox.agents.llm_agent import LLMAgent
from edgevox.agents.parsing import spoken_text
from edgevox.agents.tools import tool
from edgevox.runtime.bus import EventBus
from edgevox.runtime.context import AgentContext
from edgevox.testing import ScriptedLLM

CALL = '{"name": "drive_to", "arguments": {"place": "kitchen"}}'

# (raw model output, what is said)
RAW = [
    (f"{CALL} Sure, going to the kitchen!<|im_end|>", "Sure, going to the kitchen!"),
    ("Sure, going to the kitchen!<|im_end|>\n<|im_start|>user\nthanks<|im_end|>", "Sure, going to the kitchen!"),
    ("<|im_start|>assistant\nOn my way to the kitchen.<|im_end|>", "On my way to the kitchen."),
    (f"Sure, going to the kitchen! <tool_call>\n{CALL}\n</tool_call>", "Sure, going to the kitchen!"),
    ("On my way to the kitchen.</s>", "On my way to the kitchen."),
    ("It is sunny today.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nthanks", "It is sunny today."),
    ("<start_of_turn>model\nHello there!<end_of_turn>\n<start_of_turn>user\nhi", "Hello there!"),
    ("[TOOL_CALLS] [" + CALL + "]", ""),
    ("<|python_tag|>" + CALL + "<|eom_id|>", ""),
    ("<think>The user wants the kitchen.</think>Okay, heading there.", "Okay, heading there."),
    ('drive_to(place="kitchen") Okay!', "Okay!"),
    ("Hi there! " + CALL[:20], "Hi there!"),  # a call cut off by max_tokens
    ("Hi there!<|im_", "Hi there!"),  # a token cut off by max_tokens
    ("<|endoftext|>", ""),
    ('```json\n{"place": "kitchen"}\n```\nDone.', "Done."),
    # words are kept
    ("Three < four, and {curly} braces [laughs] are fine.", "Three < four, and {curly} braces [laughs] are fine."),
    ("Plain words.", "Plain words."),
]
MARKUP = re.compile(r"<\||\|>|</?s>|</?[a-z_]+>|<start_of_turn>|\[TOOL_CALLS\]|\"name\"|im_end|im_start")


def drive_to_tool():
    ran: list[str] = []

    @tool
    def drive_to(place: Literal["kitchen", "bedroom"]) -> str:
        """Drive the robot to a room."""
        ran.append(place)
        return f"Arrived at the {place}."

    return drive_to, ran


@pytest.mark.parametrize(("raw", "said"), RAW, ids=[r[:30] for r, _ in RAW])
def test_spoken_text_keeps_only_the_words(raw, said):
    drive_to, _ = drive_to_tool()
    assert spoken_text(raw, [drive_to]) == said


@pytest.mark.parametrize(("raw", "said"), RAW, ids=[r[:30] for r, _ in RAW])
def test_streamed_pieces_only_ever_extend_what_was_said(raw, said):
    """Fed one character at a time (the worst split a tokenizer can make), no partial token
    like ``<|im_`` ever goes out, and the pieces add up to the final text."""
    drive_to, _ = drive_to_tool()
    out = ""
    for i in range(1, len(raw) + 1):
        now = spoken_text(raw[:i], [drive_to], final=False)
        if now.startswith(out):
            out = now
        assert not MARKUP.search(out) or MARKUP.search(said), (raw[:i], out)
    assert out.strip() == said or said.startswith(out.strip())


def reply_model(reply: str, pick: str = "none"):
    """A model whose tool choice is ``pick`` and whose reply in words is ``reply``."""

    def model(messages, grammar):
        if grammar and '"none"' in grammar:
            return pick
        if grammar:
            return '"kitchen"' if messages[-1]["content"].endswith("place?") else '{"place": "kitchen"}'
        return reply

    return model


def run(agent, text="hi"):
    bus = EventBus("spoken")
    events: list = []
    bus.add_observer(events.append)
    result = agent.run(text, AgentContext(bus=bus, session_id="s"))
    assert bus.close() == []
    spoken = "".join(e.text for e in events if isinstance(e, ReplyDelta))
    return result, spoken


STREAMED = [(raw, said) for raw, said in RAW if said and not raw.lstrip().startswith(("{", "<", "[", "`", "drive_to"))]


@pytest.mark.parametrize(("raw", "said"), STREAMED, ids=[r[:30] for r, _ in STREAMED])
def test_a_streamed_reply_says_and_remembers_only_the_words(raw, said):
    drive_to, ran = drive_to_tool()
    llm = ScriptedLLM(reply_model(raw))
    agent = LLMAgent("robot", "You drive.", tools=[drive_to], llm=llm, decoder=TwoStageDecoder())
    result, spoken = run(agent, "how is it going?")
    assert spoken.strip() == result.text == said and ran == []
    assert agent.history("s")[-1] == {"role": "assistant", "content": said}


def test_a_call_with_prose_after_a_tool_ran_says_the_tools_own_words():
    """The brief's case: after the drive ran, the model's copy of the call plus its prose is
    replaced by the record's words (replies come from what actually happened)."""
    drive_to, ran = drive_to_tool()
    llm = ScriptedLLM(reply_model(f"{CALL} Sure, going to the kitchen!<|im_end|>", pick="drive_to"))
    agent = LLMAgent("robot", "You drive.", tools=[drive_to], llm=llm, decoder=TwoStageDecoder(), max_tool_hops=1)
    result, spoken = run(agent, "drive to the kitchen")
    assert ran == ["kitchen"] and spoken == result.text == "Arrived at the kitchen."


def test_schema_first_acts_then_never_speaks_the_models_markup():
    drive_to, ran = drive_to_tool()
    llm = ScriptedLLM(reply_model(f"{CALL} Sure, going to the kitchen!<|im_end|>"))
    agent = LLMAgent("robot", "You drive.", tools=[drive_to], llm=llm)  # SchemaFirstDecoder
    result, spoken = run(agent, "drive to the kitchen")
    assert ran == ["kitchen"] and spoken == result.text == "Arrived at the kitchen."
    llm = ScriptedLLM(reply_model("Hello!<|im_end|>\n<|im_start|>user\nbye"))
    agent = LLMAgent("robot", "You drive.", tools=[drive_to], llm=llm)
    assert run(agent, "good morning")[1] == "Hello!"


def test_a_call_no_tool_ran_is_never_spoken_nor_its_claim():
    """The model chose no action, then wrote a call and a claim: nothing of it is said."""
    drive_to, ran = drive_to_tool()
    llm = ScriptedLLM(reply_model(f"{CALL} Sure, going to the kitchen!<|im_end|>"))
    agent = LLMAgent("robot", "You drive.", tools=[drive_to], llm=llm, decoder=TwoStageDecoder())
    result, spoken = run(agent, "what can you do?")
    assert ran == [] and spoken == result.text == GARBLED_CALL_REPLY


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        ("Sure, going to the kitchen!<|im_end|>\n<|im_start|>user\nthanks<|im_end|>", "Sure, going to the kitchen!"),
        ("<|im_start|>assistant\nHello!<|im_end|>", "Hello!"),
        ("It is sunny.</s>", "It is sunny."),
    ],
)
def test_free_text_decoder_replies_go_through_the_seam(raw, said):
    drive_to, ran = drive_to_tool()
    agent = LLMAgent("robot", tools=[drive_to], llm=ScriptedLLM([raw]), decoder=FreeTextDecoder())
    result, spoken = run(agent)
    assert spoken == result.text == said and ran == []


def test_free_text_decoder_still_runs_a_call_followed_by_template_tokens():
    drive_to, ran = drive_to_tool()
    llm = ScriptedLLM([f"<tool_call>\n{CALL}\n</tool_call><|im_end|>", "Here we are.<|im_end|>"])
    agent = LLMAgent("robot", tools=[drive_to], llm=llm, decoder=FreeTextDecoder(), max_tool_hops=1)
    result, spoken = run(agent, "drive to the kitchen")
    assert ran == ["kitchen"] and spoken == result.text == "Here we are."


def test_grammar_decoder_reply_goes_through_the_seam():
    drive_to, _ = drive_to_tool()
    llm = ScriptedLLM(['{"reply": "Hello!<|im_end|><|im_start|>user"}'])
    agent = LLMAgent("robot", tools=[drive_to], llm=llm, decoder=GrammarDecoder())
    assert run(agent)[1] == "Hello!"


def test_a_decoders_own_reply_is_cleaned_by_the_agent_too():
    """A third-party decoder that hands back raw model text is cleaned where it is said."""
    from edgevox.agents.decoders import Decision

    class Raw:
        def decide(self, request):
            return Decision(None, reply="Fine, thanks!<|eot_id|><|start_header_id|>user")

    drive_to, _ = drive_to_tool()
    agent = LLMAgent("robot", tools=[drive_to], llm=ScriptedLLM([]), decoder=Raw())
    assert run(agent)[1] == "Fine, thanks!"
