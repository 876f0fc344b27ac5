"""OmniForge's handoff protocol through the public API, across turns: recent turns travel with a
handoff (the user never repeats themselves), the handoff message fields, ``return_expected`` /
``preserve_state``, a thread-id mismatch refused, the "Connecting you with ..." notification,
and per-session memory of delegated workers and handoff targets. Class and YAML."""

from __future__ import annotations

import json

import pytest

from edgevox.agents import LLMAgent
from edgevox.agents.base import Handoff
from edgevox.agents.decoders import FreeTextDecoder, TwoStageDecoder
from edgevox.agents.events import ReplyDelta
from edgevox.agents.run import stream_handoff
from edgevox.config.build import make_agents
from edgevox.config.loader import parse_config
from edgevox.errors import ArgumentError, ConfigError, HandoffError
from edgevox.orchestration import (
    Coordinator,
    Delegator,
    HandoffHandler,
    SessionStore,
    Swarm,
    build_orchestration,
)
from edgevox.orchestration.events import HandoffAccepted, HandoffRejected
from edgevox.orchestration.handoff_context import HandoffOptions
from edgevox.orchestration.tools import handoff_conversation
from edgevox.runtime.context import AgentContext
from edgevox.testing import ScriptedLLM

FACT = "My order number is 4417 and the parcel never came."


def call(tool: str, **arguments) -> str:
    return f"<tool_call>{json.dumps({'name': tool, 'arguments': arguments})}</tool_call>"


def hands_off_then_says(words: str, **arguments):
    """A scripted model: calls handoff_conversation(**arguments) on a new request, then says ``words``."""

    def reply(messages, _grammar):
        if "tool ran" in messages[-1]["content"]:
            return words
        return call("handoff_conversation", **arguments)

    return reply


def prompt_text(llm: ScriptedLLM, index: int = -1) -> str:
    """Everything the model was given in one call (system prompt, history, request)."""
    return "\n".join(m["content"] for m in llm.calls[index].messages)


def ctx(session: str = "s1", **fields) -> AgentContext:
    return AgentContext(session_id=session, **fields)


# -- 1. recent turns travel with the handoff ------------------------------------------------------


def test_next_turn_handoff_carries_what_the_user_said_so_they_never_repeat_it():
    front_llm = ScriptedLLM(
        hands_off_then_says(
            "Let me get our delivery team.", target="delivery", reason="lost parcel", summary="Parcel missing."
        )
    )
    delivery_llm = ScriptedLLM(default="I will trace parcel 4417 now.")
    front = LLMAgent("front", llm=front_llm, tools=[handoff_conversation], decoder=FreeTextDecoder())
    delivery = LLMAgent("delivery", llm=delivery_llm)
    coord = Coordinator({"front": front, "delivery": delivery})
    coord.run(FACT, ctx())
    assert coord.state("s1").active_agent == "delivery"
    assert coord.run("Hello?", ctx()).agent == "delivery"
    seen = prompt_text(delivery_llm)
    assert "4417" in seen and "Parcel missing." in seen  # the user's own words AND the summary
    # Another session never sees them.
    coord.run("hi there", ctx("s2"))
    assert "4417" not in prompt_text(front_llm)


def test_history_turns_bounds_what_travels_and_zero_sends_the_summary_only(Scripted):
    def build(history_turns):
        front, helper = Scripted("front"), Scripted("helper", lambda task, c: task)
        replies = iter(["Noted.", "Noted again."])

        def behaviour(task, c):
            if "hand me over" in task:
                return front.call_tool(handoff_conversation, {"target": "helper", "reason": "r", "summary": "S."}, c)
            return next(replies)

        front.behaviour = behaviour
        coord = Coordinator(
            {"front": front, "helper": helper},
            handoff=None
            if history_turns is None
            else HandoffHandler(
                {"front", "helper"}, store := SessionStore(), options=HandoffOptions(history_turns=history_turns)
            ),
            store=None if history_turns is None else store,
        )
        for text in ("first fact", "second fact", "hand me over"):
            coord.run(text, ctx())
        return coord.run("go on", ctx()).text

    two = build(2)
    assert "The last 2 turns: assistant: Noted again. | user: hand me over" in two and "first fact" not in two
    assert build(0).startswith("Context from the previous agent: S.\n\nUser: go on")
    default = build(None)  # the default, 6 messages: all of them
    assert "user: first fact | assistant: Noted. | user: second fact" in default


def test_same_turn_handoff_in_a_swarm_carries_the_earlier_turns(Scripted):
    support_llm = ScriptedLLM(default="Support here, I see order 4417.")
    sales = Scripted("sales")
    support = LLMAgent("support", llm=support_llm)

    def behaviour(task, c):
        if "support" in task:
            sales.call_tool(
                handoff_conversation, {"target": "support", "reason": "tech", "summary": "Wants support."}, c
            )
            return "Passing you on."
        return "Thanks, noted."

    sales.behaviour = behaviour
    swarm = Swarm([sales, support], entry="sales")
    swarm.run(FACT, ctx())
    result = swarm.run("I need support please", ctx())
    assert result.agent == "support"
    seen = prompt_text(support_llm)
    assert "4417" in seen and "Wants support." in seen and "I need support please" in seen


def test_handoff_to_tool_carries_the_earlier_turns_and_the_target_keeps_its_own_memory():
    expert_llm = ScriptedLLM(default="Boil it.")
    expert = LLMAgent("expert", llm=expert_llm, description="cooking")
    hand_over = ["handoff_to_expert", '{"reason": "cooking"}']
    front_llm = ScriptedLLM(["none", "I am allergic to nuts, noted.", *hand_over, *hand_over, *hand_over])
    front = LLMAgent("front", llm=front_llm, handoffs=[expert], decoder=TwoStageDecoder())
    front.run("I am allergic to nuts.", ctx())
    assert front.run("how do I cook rice?", ctx()).handoff == "expert"
    assert "allergic to nuts" in expert_llm.calls[-1].messages[0]["content"]  # recent turns, in its system prompt
    front.run("and how do I cook pasta?", ctx())
    second = prompt_text(expert_llm)
    assert "how do I cook rice?" in second and "Boil it." in second  # the target's earlier exchange in this session
    front.run("how do I cook beans?", ctx("other"))
    assert "rice" not in prompt_text(expert_llm)  # another session: a fresh memory


# -- 2. delegated workers keep per-session memory; scratch state stays isolated ---------------------


def test_a_worker_asked_twice_sees_its_earlier_exchange_in_that_session_only():
    worker_llm = ScriptedLLM(default="Noted.")
    worker = LLMAgent("worker", llm=worker_llm)
    delegator = Delegator({"worker": worker})
    caller = ctx(state={"mine": 1})
    assert delegator.delegate("worker", "The gate code is 7.", caller).text == "Noted."
    delegator.delegate("worker", "What is the gate code?", caller)
    assert "The gate code is 7." in prompt_text(worker_llm)
    delegator.delegate("worker", "What is the gate code?", ctx("s2"))
    assert "gate code is 7" not in prompt_text(worker_llm)
    assert caller.state == {"mine": 1}


def test_a_worker_scratch_state_is_its_own_not_the_callers(Scripted):
    def worker_behaviour(task, c):
        c.state["secret"] = task
        return f"keys: {sorted(c.state)}"

    worker = Scripted("worker", worker_behaviour)
    caller = ctx(state={"plan": "mine"})
    assert Delegator({"worker": worker}).delegate("worker", "x", caller).text == "keys: ['secret']"
    assert caller.state == {"plan": "mine"}


# -- 3. the handoff message fields, return_expected / preserve_state, thread id -----------------------


def test_handoff_message_fields_on_the_handoff_the_event_and_what_the_target_reads(Scripted, bus, recorded, of_kind):
    front, billing = Scripted("front"), Scripted("billing")
    read: list[Handoff | None] = []

    def front_behaviour(task, c):
        if task == "charged twice":
            args = {
                "target": "billing",
                "reason": "double charge",
                "summary": "Charged twice.",
                "return_expected": True,
            }
            return front.call_tool(handoff_conversation, args, c)
        return "front again"

    def billing_behaviour(task, c):
        read.append(c.handoff.received(c.session_id))
        return task

    front.behaviour, billing.behaviour = front_behaviour, billing_behaviour
    coord = Coordinator({"front": front, "billing": billing}, bus=bus)
    coord.handoff.set_user("s1", "u-42")
    coord.run("hello", ctx(bus=bus))
    coord.run("charged twice", ctx(bus=bus))
    answer = coord.run("so?", ctx(bus=bus)).text
    [event] = of_kind(recorded, HandoffAccepted)
    assert (event.thread_id, event.user_id, event.source_agent, event.target_agent) == (
        "s1",
        "u-42",
        "front",
        "billing",
    )
    assert (event.summary, event.reason, event.history_count) == ("Charged twice.", "double charge", 3)
    assert event.return_expected and event.with_return and not event.preserve_state
    [message] = read
    assert message is not None and message.message() == {
        "thread_id": "s1",
        "user_id": "u-42",
        "source_agent": "front",
        "target_agent": "billing",
        "summary": "Charged twice.",
        "reason": "double charge",
        "history_count": 3,
        "history": ["user: hello", "assistant: front again", "user: charged twice"],
        "return_expected": True,
        "preserve_state": False,
        "next_phase": None,
        "timing": "next_turn",
    }
    assert message.return_expected and message.source_agent == "front" and message.target_agent == "billing"
    assert answer.startswith(
        "Context from the previous agent: Charged twice. User id: u-42. The last 3 turns: user: hello"
    )
    assert Handoff.from_message(message.message()) == message


@pytest.mark.parametrize("preserve", [True, False])
def test_preserve_state_gives_the_caller_its_scratch_state_back_when_the_conversation_returns(Scripted, preserve):
    front, specialist = Scripted("front"), Scripted("specialist")

    def front_behaviour(task, c):
        if task.endswith("specialist please"):
            args = {
                "target": "specialist",
                "reason": "r",
                "summary": "s",
                "with_return": True,
                "preserve_state": preserve,
            }
            return front.call_tool(handoff_conversation, args, c)
        c.state["cart"] = c.state.get("cart", []) + [task.rsplit(" ", 1)[-1]]
        return f"cart: {c.state['cart']}"

    def specialist_behaviour(task, c):
        return specialist.call_tool(handoff_conversation, {"target": "return", "reason": "done", "summary": "done"}, c)

    front.behaviour, specialist.behaviour = front_behaviour, specialist_behaviour
    coord = Coordinator({"front": front, "specialist": specialist})
    assert coord.run("add apples", ctx()).text == "cart: ['apples']"
    coord.run("specialist please", ctx())
    coord.run("all done", ctx())  # the specialist hands back
    assert coord.state("s1").active_agent == "front"
    again = coord.run("add pears", ctx()).text
    assert again.endswith("cart: ['apples', 'pears']" if preserve else "cart: ['pears']")


def test_a_handoff_whose_thread_id_is_not_the_session_is_refused_with_one_line(Scripted, bus, recorded, of_kind):
    front, other = Scripted("front"), Scripted("other")
    refusals: list[str] = []

    def front_behaviour(task, c):
        try:
            c.handoff.request(session_id=c.session_id, from_agent="front", target="other", thread_id="s9")
        except HandoffError as exc:
            refusals.append(str(exc))
        return "still me"

    front.behaviour = front_behaviour
    coord = Coordinator({"front": front, "other": other}, bus=bus)
    assert coord.run("move me", ctx(bus=bus)).text == "still me"
    assert coord.state("s1").active_agent == "front"
    assert refusals == [
        "handoff refused: its thread id 's9' is not this conversation's ('s1'); "
        "a handoff can only move the conversation it is requested in"
    ]
    [rejected] = of_kind(recorded, HandoffRejected)
    assert rejected.reason == refusals[0] and rejected.session_id == "s1"
    # Same-turn: a Handoff message from another thread is refused before its target runs.
    stray = Handoff(from_agent="front", target="other", timing="same_turn", thread_id="s9")
    with pytest.raises(HandoffError, match="thread id 's9' is not this conversation's"):
        next(stream_handoff(stray, other, "x", ctx(bus=bus)))
    assert len(of_kind(recorded, HandoffRejected)) == 2 and other.tasks == []


# -- 4. "Connecting you with ..." ------------------------------------------------------------------


def test_the_user_hears_connecting_you_once_before_the_target_speaks_next_turn(Scripted):
    front, billing = Scripted("front"), Scripted("billing_agent", "Billing here.")
    front.behaviour = lambda task, c: (
        front.call_tool(handoff_conversation, {"target": "billing_agent", "reason": "r", "summary": "s"}, c),
        "One moment.",
    )[1]
    coord = Coordinator({"front": front, "billing_agent": billing})
    stream = coord.stream("I was charged twice", ctx())
    pieces = [e.text for e in stream if isinstance(e, ReplyDelta)]
    assert pieces == ["One moment.", " Connecting you with billing agent... "]  # spaced: pieces are joined as they come
    assert stream.result().text == "One moment. Connecting you with billing agent..."
    assert [e.text for e in coord.stream("hello?", ctx()) if isinstance(e, ReplyDelta)] == ["Billing here."]


def test_the_notification_is_configurable_and_can_be_turned_off(Scripted):
    def run(options):
        front, billing = Scripted("front"), Scripted("billing_agent", "Billing here.")
        front.behaviour = lambda task, c: front.call_tool(
            handoff_conversation, {"target": "billing_agent", "reason": "refund", "summary": "s"}, c
        )
        store = SessionStore()
        handler = HandoffHandler({"front", "billing_agent"}, store, options=options)
        return (
            Coordinator({"front": front, "billing_agent": billing}, handoff=handler, store=store).run("x", ctx()).text
        )

    custom = HandoffOptions(
        notification="One moment, {target} will help you ({reason}).", names={"billing_agent": "our billing team"}
    )
    assert run(custom).endswith("One moment, our billing team will help you (refund).")
    assert "Connecting" not in run(HandoffOptions(notify=False))
    for bad, why in [
        ({"notification": "Hi {agent}"}, r"unknown field\(s\) \['agent'\]; use \{reason\}, \{source\}, \{target\}"),
        ({"history_turns": -1}, "must be an integer from 0 to 50"),
        ({"notification": " "}, "notification is empty while notify is on"),
    ]:
        with pytest.raises(ArgumentError, match=why):
            HandoffOptions(**bad)


def test_a_swarm_says_connecting_you_between_the_handing_agent_and_the_target(Scripted):
    sales, support = Scripted("sales"), Scripted("support", "Support here.")

    def behaviour(task, c):
        sales.call_tool(handoff_conversation, {"target": "support", "reason": "tech", "summary": "s"}, c)
        return "Passing you on."

    sales.behaviour = behaviour
    stream = Swarm([sales, support]).stream("my printer is broken", ctx())
    pieces = [e.text for e in stream if isinstance(e, ReplyDelta)]
    assert pieces == [" Connecting you with support... ", "Support here."]


# -- YAML ----------------------------------------------------------------------------------------

YAML = """
agents:
  front:
    instructions: "You are the front desk."
    tools: [edgevox.orchestration.tools:handoff_conversation]
  billing:
    instructions: "You are billing."
orchestration:
  conversation:
    stages:
      - {phase: intake, agent: front, next: handling}
      - {phase: handling, agent: billing}
  handoff:
"""
HANDOFF = """    history_turns: 2
    notification: "Please hold for {target}."
    names: {billing: "the billing desk"}
"""


def yaml_app(handoff: str = HANDOFF):
    def reply(messages, _grammar):
        if messages[0]["content"].startswith("You are billing."):
            return "Billing here."
        return "Sure." if "tool ran" in messages[-1]["content"] else "Noted."

    app = parse_config(YAML + handoff)
    llm = ScriptedLLM(reply)
    return build_orchestration(app.orchestration, make_agents(app, llm), main_agent=app.main_agent), llm


def test_yaml_handoff_section_sets_recent_turns_and_the_notification():
    coord, llm = yaml_app()
    coord.run(FACT, ctx())
    # (LLMAgent's schema fast path fills handoff_conversation from the user's words.)
    first = coord.run("please hand the conversation to billing, I want a refund", ctx())
    assert first.text == "Sure. Please hold for the billing desk."
    assert coord.run("hello?", ctx()).text == "Billing here."
    seen = prompt_text(llm)
    assert "The last 2 turns: assistant: Noted. | user: please hand the conversation to billing" in seen
    assert "4417" not in seen  # only the last 2 messages travel


def test_yaml_handoff_section_turns_the_notification_off_and_rejects_bad_values():
    coord, _ = yaml_app("    notify: false\n")
    assert coord.run("please hand the conversation to billing", ctx()).text == "Sure."
    for bad, why in [
        ('    notification: "Hold for {agent}"\n', r"unknown field\(s\) \['agent'\]; use \{reason\}"),
        ("    history_turns: 99\n", "history_turns"),
        ('    notification: ""\n', "notification is empty while notify is on"),
    ]:
        with pytest.raises(ConfigError, match=why):
            yaml_app(bad)


def test_edgevox_run_speaks_connecting_you_then_the_target_answers_the_next_turn():
    """The voice loop of an app built from YAML (as ``edgevox run`` builds it) speaks the notification."""
    from edgevox.app import App, Engines
    from edgevox.voice.events import TurnDone

    head = "name: handoff-app\naudio:\n  input: {source: text}\n  output: {sink: none}\n"
    llm = ScriptedLLM(
        lambda messages, _g: (
            "Billing here."
            if messages[0]["content"].startswith("You are billing.")
            else "Sure."
            if "tool ran" in messages[-1]["content"]
            else "Noted."
        )
    )
    app = App.build(parse_config(head + YAML + HANDOFF, env={}), engines=Engines(llm=llm))
    events: list = []
    app.add_observer(events.append)
    app.start()
    try:
        app.submit_text("please hand the conversation to billing, I want a refund")
        assert app.wait_idle(10.0)
        app.submit_text("hello?")
        assert app.wait_idle(10.0)
    finally:
        assert app.stop(3.0), app.stop_report
    replies = [e.reply_text for e in events if isinstance(e, TurnDone)]
    assert replies == ["Sure. Please hold for the billing desk.", "Billing here."]


def test_yaml_swarm_carries_the_earlier_turns_and_says_the_configured_notification():
    app = parse_config(
        """
agents:
  concierge: {instructions: "You greet guests.", decoder: two_stage}
  chef: {instructions: "You cook.", decoder: two_stage}
orchestration:
  strategy: swarm
  swarm: {agents: [concierge, chef]}
  handoff:
    notification: "Hold on, {target} is coming."
    names: {chef: "our chef"}
"""
    )
    to_chef = {"target": "chef", "reason": "food", "summary": "Wants pasta."}

    def reply(messages, grammar):
        chef, last = messages[0]["content"].startswith("You cook."), messages[-1]["content"]
        if grammar and '"none"' in grammar:  # which tool: the concierge hands food on
            wants_chef = not chef and "pasta" in last and "tool ran" not in last
            return "handoff_conversation" if wants_chef else "none"
        if grammar:  # its arguments
            return json.dumps(to_chef)
        return "Pasta it is." if chef else "Welcome!"

    llm = ScriptedLLM(reply)
    coord = build_orchestration(app.orchestration, make_agents(app, llm), main_agent=app.main_agent)
    coord.run("I am vegetarian.", ctx())
    stream = coord.stream("I want pasta", ctx())
    pieces = [e.text for e in stream if isinstance(e, ReplyDelta)]
    assert pieces[0] == " Hold on, our chef is coming. " and "".join(pieces[1:]) == "Pasta it is."
    chef_prompt = prompt_text(llm)
    assert chef_prompt.startswith("You cook.") and "I am vegetarian." in chef_prompt and "Wants pasta." in chef_prompt


def test_the_yaml_defaults_are_the_class_defaults():
    from edgevox.config.build_orchestration import handoff_options
    from edgevox.orchestration import OrchestrationConfig

    assert handoff_options(OrchestrationConfig()) == HandoffOptions()
