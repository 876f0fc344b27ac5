"""``--json``: one JSON line per event, and one line per piece of the reply (the voice loop's
``voice.token`` replaces the ``agent.reply_delta`` it repeats; deltas it does not repeat stay)."""

from __future__ import annotations

import io
import json
import threading

from edgevox.agents.events import ReplyDelta
from edgevox.cli.main import main
from edgevox.cli.status import JsonEvents
from edgevox.voice.events import Token


def test_each_piece_of_the_reply_is_one_json_line(scripted_config, capsys):
    assert main(["run", str(scripted_config), "--say", "hi", "--json"]) == 0
    lines = capsys.readouterr().out.splitlines()
    events = [json.loads(line) for line in lines]
    tokens = [e["text"] for e in events if e["kind"] == "voice.token"]
    assert "".join(tokens) == "Hello from the robot. How can I help?"
    # Before: every token was written twice, as agent.reply_delta and as voice.token.
    assert [e for e in events if e["kind"] == "agent.reply_delta"] == []
    assert len(lines) == len(set(lines))
    assert [e["seq"] for e in events] == sorted(e["seq"] for e in events)


def test_deltas_the_voice_loop_does_not_repeat_are_written_and_held_ones_flushed():
    out = io.StringIO()
    writer = JsonEvents(out)
    writer.on_event(ReplyDelta(agent="main", text="Hello"))
    writer.on_event(Token(turn_id=1, text="Hello"))  # the loop's copy: one line, the token
    writer.on_event(ReplyDelta(agent="patrol", text="Noted"))

    def other_thread() -> None:  # another agent's delta, on its own thread, is not merged
        writer.on_event(Token(turn_id=2, text="Noted"))

    thread = threading.Thread(target=other_thread)
    thread.start()
    thread.join()
    writer.on_event(ReplyDelta(agent="patrol", text=" it."))  # writes the held "Noted" first
    writer.flush()  # the run's end: " it." is written too
    written = [(e["kind"], e["text"]) for e in map(json.loads, out.getvalue().splitlines())]
    assert written == [
        ("voice.token", "Hello"),
        ("voice.token", "Noted"),
        ("agent.reply_delta", "Noted"),
        ("agent.reply_delta", " it."),
    ]
    assert writer.written == 4
