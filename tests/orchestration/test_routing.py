from __future__ import annotations

import pytest

from edgevox.orchestration import ConversationRouter, ConversationState, RoutingConditions, RoutingRule
from edgevox.orchestration.events import TurnAnswered, UserTurn

AGENTS = ["triage", "billing", "tech", "boss"]


def turn(text="hi", intent=None, source="user"):
    return UserTurn(text=text, intent=intent, source=source)


def test_active_agent_keeps_the_conversation_before_any_rule():
    r = ConversationRouter(
        AGENTS, rules=[RoutingRule("billing", RoutingConditions(intent="pay"))], default_agent="triage"
    )
    state = ConversationState().transition(to_agent="tech")
    d = r.route(turn(intent="pay"), state)
    assert (d.agent, d.why) == ("tech", "affinity")


def test_rules_are_tried_in_ascending_priority_and_first_match_wins():
    # RoomKit's order (lower number first); before issue 13 the highest priority went first.
    rules = [
        RoutingRule("billing", RoutingConditions(intent="pay"), priority=5, name="later"),
        RoutingRule("tech", RoutingConditions(intent="pay"), priority=1, name="first"),
        RoutingRule("boss", RoutingConditions(intent="pay"), priority=1, name="first-declared-later"),
    ]
    d = ConversationRouter(AGENTS, rules=rules).route(turn(intent="pay"), ConversationState())
    assert (d.agent, d.why) == ("tech", "rule:first")


def test_conditions_are_anded():
    rule = RoutingRule("billing", RoutingConditions(phase="handling", intent="pay", source="user"))
    r = ConversationRouter(AGENTS, rules=[rule], default_agent="triage")
    handling = ConversationState(phase="handling")
    assert r.route(turn(intent="pay"), handling).agent == "billing"
    assert r.route(turn(intent="pay"), ConversationState()).agent == "triage"  # wrong phase
    assert r.route(turn(intent="chat"), handling).agent == "triage"  # wrong intent
    assert r.route(turn(intent="pay", source="kiosk"), handling).agent == "triage"  # wrong source


def test_custom_predicate_and_intent_classifier():
    rule = RoutingRule("tech", RoutingConditions(predicate=lambda ev, st: "wifi" in ev.text))
    r = ConversationRouter(
        AGENTS,
        rules=[rule, RoutingRule("billing", RoutingConditions(intent="pay"))],
        intent_classifier=lambda text: "pay" if "invoice" in text else None,
    )
    assert r.route(turn("my wifi is down"), ConversationState()).agent == "tech"
    assert r.route(turn("my invoice"), ConversationState()).agent == "billing"
    assert r.route(turn("hello"), ConversationState()).agent is None


def test_default_agent_when_nothing_matches():
    d = ConversationRouter(AGENTS, default_agent="triage").route(turn(), ConversationState())
    assert (d.agent, d.why) == ("triage", "default")


def test_events_produced_by_agents_are_never_routed():
    r = ConversationRouter(AGENTS, default_agent="triage")
    assert r.route(turn(source="billing"), ConversationState()).agent is None
    assert r.route(TurnAnswered(source="x", text="hi"), ConversationState()).agent is None


def test_unknown_agent_names_are_rejected_at_construction():
    with pytest.raises(ValueError, match="unknown agent 'nobody'"):
        ConversationRouter(AGENTS, rules=[RoutingRule("nobody")])
    with pytest.raises(ValueError, match="default_agent"):
        ConversationRouter(AGENTS, default_agent="ghost")
