"""The console's status line never sticks: after an utterance the loop drops (the robot's own
voice under the half-duplex echo guard, nothing said, nothing speakable) it goes back to what
the robot is doing, and it never shows the robot's words as the user's."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from edgevox.cli.console_view import ConsoleView
from edgevox.cli.status import StatusView
from edgevox.voice.events import (
    FirstAudio,
    SpeechEnded,
    SpeechStarted,
    Token,
    TranscriptEvent,
    TurnDone,
    TurnStarted,
)

ROBOT_WORDS = "Hello from the robot. How can I help?"


def make_view(cls: type[StatusView]) -> tuple[StatusView, io.StringIO]:
    out = io.StringIO()
    v = cls(Console(file=out, width=200, highlight=False), live=False, name="robot")
    v.start()
    return v, out


def speaking_reply(v: StatusView, turn_id: int = 1) -> None:
    for event in (
        SpeechStarted(turn_id=turn_id, timestamp=1.0),
        SpeechEnded(turn_id=turn_id, last_voiced_at=1.5, timestamp=1.6),
        TranscriptEvent(turn_id=turn_id, text="hello", timestamp=1.9),
        TurnStarted(turn_id=turn_id, text="hello", timestamp=1.9),
        Token(turn_id=turn_id, text=ROBOT_WORDS, timestamp=2.0),
        FirstAudio(turn_id=turn_id, timestamp=2.1),
    ):
        v.on_event(event)


def echo(v: StatusView, turn_id: int, text: str = ROBOT_WORDS) -> None:
    """What the loop publishes when it hears its own reply under half-duplex."""
    v.on_event(SpeechStarted(turn_id=turn_id, during_playback=True, timestamp=2.2))
    v.on_event(SpeechEnded(turn_id=turn_id, ignored=True, last_voiced_at=3.0, timestamp=3.1))
    v.on_event(TranscriptEvent(turn_id=turn_id, text=text, timestamp=3.4))


@pytest.mark.parametrize("cls", [StatusView, ConsoleView])
def test_an_ignored_echo_returns_the_status_to_speaking_then_listening(cls):
    v, out = make_view(cls)
    speaking_reply(v)
    assert v.render_text().startswith("● speaking")
    echo(v, turn_id=2)
    shown = v.render_text()
    assert shown.startswith("● speaking"), shown
    assert "you: Hello from the robot" not in shown and "thinking" not in shown
    v.on_event(TurnDone(turn_id=1, reply_text=ROBOT_WORDS, timestamp=4.0))
    assert v.render_text().startswith("● listening"), v.render_text()
    # The echo after the reply ended (the echo tail): still back to listening, never "thinking".
    echo(v, turn_id=3)
    assert v.render_text().startswith("● listening") and "you:" not in v.render_text()
    assert "you: Hello from the robot" not in out.getvalue()
    # The next real utterance is shown as usual.
    v.on_event(SpeechStarted(turn_id=4, timestamp=5.0))
    v.on_event(SpeechEnded(turn_id=4, last_voiced_at=5.5, timestamp=5.6))
    v.on_event(TranscriptEvent(turn_id=4, text="go to the kitchen", timestamp=5.9))
    assert v.render_text().startswith("● thinking") and "you: go to the kitchen" in v.render_text()


@pytest.mark.parametrize("text", ["", "  ", "..."])
def test_a_transcript_that_never_becomes_a_turn_returns_the_status_to_listening(text):
    v, _ = make_view(ConsoleView)
    v.on_event(SpeechStarted(turn_id=1, timestamp=1.0))
    v.on_event(SpeechEnded(turn_id=1, last_voiced_at=1.5, timestamp=1.6))
    assert v.render_text().startswith("● thinking")
    v.on_event(TranscriptEvent(turn_id=1, text=text, timestamp=1.9))
    assert v.render_text().startswith("● listening"), v.render_text()


def test_the_live_console_shows_the_reply_being_written_above_the_status_line():
    out = io.StringIO()
    v = ConsoleView(Console(file=out, width=200, highlight=False), live=True, name="robot")
    speaking_reply(v)
    screen = Console(file=io.StringIO(), width=200, record=True)
    screen.print(v._render())
    assert screen.export_text().splitlines() == [f"robot: {ROBOT_WORDS}", v.render_text().rstrip()]
    assert v.render_text().startswith("● speaking")


def test_the_status_line_says_when_the_wake_word_was_heard_and_when_the_robot_went_back_to_sleep():
    from edgevox.voice.events import WakeDetected, WakeWindowClosed

    v, _ = make_view(ConsoleView)
    v.on_event(WakeDetected(model="okay_nabu", phrase="okay nabu", probability=0.97, window_s=8.0, timestamp=1.0))
    assert v.render_text() == "● listening  wake word 'okay nabu'"
    v.on_event(WakeWindowClosed(open_s=8.0, timestamp=9.0))
    assert v.render_text() == "● listening  asleep: say the wake word"


def test_a_line_that_cuts_a_streamed_reply_leaves_the_reply_whole_on_its_last_line():
    from edgevox.agents.events import AgentReply, ToolCallStarted

    out = io.StringIO()
    v = ConsoleView(Console(file=out, width=200), live=False, name="robot", background={"watcher": "night_watch"})
    v.on_event(TranscriptEvent(turn_id=1, text="go", timestamp=1.0))
    v.on_event(TurnStarted(turn_id=1, text="go", timestamp=1.0))
    v.on_event(Token(turn_id=1, text="Going", timestamp=1.1))
    v.on_event(ToolCallStarted(tool="move", arguments={"distance_m": 1.0}, source="assistant"))
    v.on_event(Token(turn_id=1, text=" now.", timestamp=1.2))
    v.on_event(AgentReply(text="All quiet.", source="watcher"))
    v.on_event(TurnDone(turn_id=1, reply_text="Going now.", timestamp=1.3))
    assert out.getvalue().splitlines() == [
        "you: go",
        "robot: Going",
        "  -> move(distance_m=1.0)",
        "robot: Going now.",
        "[night_watch] All quiet.",
        "robot: Going now.  [0.10 s]",  # to its first word (no audio here)
    ]


ECHO_CONFIG = """\
name: scripted
stt:
  engine: edgevox.testing:FakeSTT
  options: {script: [hello, "Hello from the robot. How can I help?"], default: ""}
vad:
  engine: edgevox.testing:FakeVAD
  options: {frame_ms: 20}
llm:
  engine: edgevox.testing:ScriptedLLM
  options: {default: "Hello from the robot. How can I help?"}
tts:
  engine: edgevox.testing:FakeTTS
  options: {sample_rate_hz: 16000}
audio:
  input: {source: device, device: pulse, device_sample_rate_hz: 16000}
  output: {sink: device, device: pulse, device_sample_rate_hz: 16000}
agents:
  assistant:
    instructions: Be brief.
"""


@pytest.mark.audio
def test_on_a_real_device_the_robot_hearing_itself_never_sticks_the_status_on_thinking(tmp_path, capfd):
    """A private PulseAudio null sink: the reply played to the sink comes back through its
    monitor (the microphone) while it plays; half-duplex ignores it. The status line goes
    back to speaking / listening, never "thinking" with the robot's own words."""
    import threading

    import numpy as np

    from edgevox.app import App
    from edgevox.config import load_config
    from edgevox.testing.pulse import private_pulseaudio, pulseaudio_installed, reinitialize_portaudio

    if not pulseaudio_installed():
        pytest.skip("the pulseaudio binary is absent (apt-get install pulseaudio pulseaudio-utils libportaudio2)")
    from edgevox.engines.audio_sounddevice import SoundDeviceOut
    from edgevox.engines.portaudio_log import AudioLibraryLog

    path = tmp_path / "echo.yaml"
    path.write_text(ECHO_CONFIG, encoding="utf-8")
    shown: list[str] = []
    echo_heard = threading.Event()
    done = threading.Event()
    routed = AudioLibraryLog()
    with private_pulseaudio(rate_hz=16000):
        reinitialize_portaudio()
        app = App.build(load_config(str(path)))
        view, out = make_view(ConsoleView)

        def watch(event) -> None:  # runs after the view (observers run in order)
            shown.append(view.render_text())
            if event.kind == "voice.transcript" and event.text.startswith("Hello from the robot"):
                echo_heard.set()
            if event.kind == "voice.turn_done":
                done.set()

        app.add_observer(view.on_event)
        app.add_observer(watch)
        user = SoundDeviceOut(device="pulse", sample_rate_hz=16000, device_rate_hz=16000)
        try:
            routed.route_alsa()
            with routed.capture_stderr():
                app.start()
            user.start()
            t = np.arange(8000) / 16000
            user.write((0.3 * np.sin(2 * np.pi * 330 * t)).astype(np.float32))  # "hello"
            assert echo_heard.wait(30), f"the robot never heard itself; shown: {shown[-5:]}"
            assert done.wait(30) and app.wait_idle(30)
        finally:
            user.stop()
            report = app.stop(5)
            routed.stop()
        reinitialize_portaudio()
    assert report.clean, report
    echo_at = next(i for i, s in enumerate(shown) if s.startswith("● speaking")) + 1
    after = shown[echo_at:]
    assert not any("you: Hello from the robot" in s or s.startswith("● thinking") for s in after), after
    assert after[-1].endswith("ignored its own voice"), after
    assert view.render_text().startswith("● listening"), view.render_text()
    assert "you: hello" in out.getvalue() and "you: Hello from the robot" not in out.getvalue()
    assert "ALSA lib" not in capfd.readouterr().err
