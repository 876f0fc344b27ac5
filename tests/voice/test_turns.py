"""The turn thread reads the one agent contract: ``stream(task, ctx) -> AgentStream``."""

from __future__ import annotations

from edgevox.agents.base import AgentBase, AgentResult, AgentStream
from edgevox.agents.events import ReplyDelta
from edgevox.runtime.context import AgentContext
from edgevox.runtime.events import ErrorEvent
from edgevox.voice.events import Token, TurnDone
from edgevox.voice.turns import TruncatesReply

from .test_loop import make_loop, start


class Scripted(AgentBase):
    """Streams ``deltas`` as ReplyDelta events, then returns ``result``."""

    name = "scripted"

    def __init__(self, deltas: list[str], result: AgentResult) -> None:
        self.deltas = deltas
        self.result = result
        self.truncated: list[str] = []

    def stream(self, task: str, ctx: AgentContext | None = None) -> AgentStream:
        def run():  # noqa: ANN202
            for d in self.deltas:
                yield ReplyDelta(text=d)
            return self.result

        return AgentStream(run())

    def truncate_reply(self, ctx: AgentContext, spoken_text: str) -> None:
        self.truncated.append(spoken_text)


def test_the_reply_text_of_an_agent_stream_is_spoken(bus, recorder, loops):
    agent = Scripted(["Hello ", "there."], AgentResult(text="Hello there."))
    loop, _ = make_loop(bus, agent=agent)
    start(loops, loop)
    loop.submit_text("hi")
    done = recorder.wait_for(TurnDone)
    assert done.status == "completed" and done.reply_text == "Hello there."
    assert [t.text for t in recorder.of(Token)] == ["Hello ", "there."]


def test_a_turn_that_failed_without_a_word_ends_as_an_error_naming_why(bus, recorder, loops):
    agent = Scripted([], AgentResult(ok=False, error="request too long: 900 tokens"))
    loop, _ = make_loop(bus, agent=agent)
    start(loops, loop)
    loop.submit_text("hi")
    done = recorder.wait_for(TurnDone)
    assert done.status == "error" and "request too long" in done.error
    assert "request too long" in recorder.wait_for(ErrorEvent).error
    assert agent.truncated == [""]  # nothing was heard: the history keeps nothing of the reply


def test_a_failure_after_words_were_spoken_is_not_turned_into_an_error(bus, recorder, loops):
    agent = Scripted(["Partly."], AgentResult(text="Partly.", ok=False, error="tool failed"))
    loop, _ = make_loop(bus, agent=agent)
    start(loops, loop)
    loop.submit_text("hi")
    assert recorder.wait_for(TurnDone).status == "completed"


def test_truncate_reply_is_a_typed_capability():
    assert isinstance(Scripted([], AgentResult()), TruncatesReply)
    assert not isinstance(object(), TruncatesReply)
