"""Agent messages: addressing, broadcast, request/reply pairing, late replies."""

from __future__ import annotations

import threading

import pytest

from edgevox.runtime.events import event_from_dict
from edgevox.runtime.messages import (
    AgentMessage,
    Requester,
    late_replies,
    reply,
    request,
    send_message,
    subscribe_inbox,
)


def test_message_fields_and_stamps(bus):
    msg = send_message(bus, from_agent="a", to="b", content={"x": 1}, topic="nav.goal")
    assert (msg.from_agent, msg.to, msg.topic, msg.content, msg.payload) == ("a", "b", "nav.goal", {"x": 1}, {"x": 1})
    assert msg.correlation_id and msg.timestamp > 0 and msg.seq > 0 and msg.source == "a"
    assert msg.kind == "agent.message"
    assert event_from_dict(msg.to_dict()) == msg


def test_inbox_gets_direct_messages_and_broadcasts_from_others_only(bus):
    inbox_b, inbox_c = [], []
    subscribe_inbox(bus, agent_name="b", handler=inbox_b.append)
    subscribe_inbox(bus, agent_name="c", handler=inbox_c.append)
    send_message(bus, from_agent="a", to="b", content=1)
    send_message(bus, from_agent="a", to="*", content=2)
    send_message(bus, from_agent="b", to="*", content=3)  # b's own broadcast
    assert [m.content for m in inbox_b] == [1, 2]
    assert [m.content for m in inbox_c] == [2, 3]


def test_inbox_topic_filter(bus):
    got = []
    subscribe_inbox(bus, agent_name="b", handler=got.append, topic="x")
    send_message(bus, from_agent="a", to="b", content=1, topic="y")
    send_message(bus, from_agent="a", to="b", content=2, topic="x")
    assert [m.content for m in got] == [2]


def test_request_pairs_the_reply_by_correlation_id(bus):
    def server(msg: AgentMessage) -> None:
        reply(bus, msg, content=msg.content * 10, from_agent="calc")

    subscribe_inbox(bus, agent_name="calc", handler=server, queued=True)
    answers = {}

    def ask(i):
        answers[i] = request(bus, from_agent=f"client{i}", to="calc", content=i, timeout_s=5).content

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert answers == {i: i * 10 for i in range(10)}
    assert late_replies(bus) == 0


def test_request_timeout_then_late_reply_is_dropped_and_counted(bus):
    held = []
    subscribe_inbox(bus, agent_name="slow", handler=held.append)
    requester = Requester(bus, "t")
    with pytest.raises(TimeoutError, match="no reply from 'slow'"):
        requester.request(from_agent="me", to="slow", content="?", timeout_s=0.02)
    assert requester.pending() == 0
    reply(bus, held[0], content="late", from_agent="slow")
    assert requester.late_replies == 1
    requester.close()


def test_replies_do_not_reach_the_inbox_unless_asked(bus):
    plain, with_replies = [], []
    subscribe_inbox(bus, agent_name="a", handler=plain.append)
    subscribe_inbox(bus, agent_name="a", handler=with_replies.append, include_replies=True)
    msg = send_message(bus, from_agent="a", to="b", content=1)
    reply(bus, msg, content=2, from_agent="b")
    assert plain == [] and [m.content for m in with_replies] == [2]
