"""``edgevox console``: replies stream, tools and skills show as they happen, a stop prints and
speaks its confirmation, background agents' replies are visible. Each test drives the real CLI
in a child process with scripted engines, across turns, reading its output as it comes."""

from __future__ import annotations

import os
import re
import selectors
import subprocess
import sys
import time
import wave
from pathlib import Path

import numpy as np
import pytest

from edgevox.engines.audio_wav import write_wav
from edgevox.testing import FakeTTS

from .conftest import write_config

REPO = Path(__file__).resolve().parents[2]

TOOLS_MODULE = '''\
from edgevox.agents.skills import GoalHandle, skill
from edgevox.agents.tools import tool


@tool
def wave(times: int = 1) -> str:
    """Wave a hand.

    Args:
        times: how many times.
    """
    return f"waved {times} times"


@skill(timeout_s=60.0)
def patrol(laps: int, goal: GoalHandle) -> str:
    """Patrol the house.

    Args:
        laps: how many laps.
    """
    for lap in range(laps):
        goal.publish_feedback({"lap": lap + 1})
        goal.sleep(0.02)  # raises Cancelled at once on a stop
    return f"patrolled {laps} laps"
'''

TOOLS_AGENTS = """\
    tools: [console_tools:wave, console_tools:patrol]
  watcher:
    instructions: Watch the house.
    llm: {engine: "console_tools:watcher_llm"}
agent: assistant
background_agents:
  - name: night_watch
    agent: watcher
    trigger: {events: [agent.skill_state], function: "console_tools:on_skill"}
"""

TRIGGER = '''

def on_skill(event):
    """The watcher looks at each finished skill."""
    return f"The skill {event.skill} {event.state}." if event.state in ("succeeded", "cancelled") else None


def watcher_llm(**options):
    """The watcher's model notes what it was told."""
    from edgevox.testing import ScriptedLLM

    return ScriptedLLM(lambda messages, grammar: "Noted: " + messages[-1]["content"])
'''


class Console:
    """``edgevox console`` in a child process; its stdout read as it comes, with deadlines."""

    def __init__(self, *args: str, cwd: Path, pythonpath: Path | None = None) -> None:
        paths = [str(REPO)] + ([str(pythonpath)] if pythonpath else []) + [os.environ.get("PYTHONPATH", "")]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "edgevox", "console", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            bufsize=0,
            env=env,
            cwd=cwd,
        )
        self.out = ""
        self.reads: list[str] = []
        """Every piece of stdout as one read returned it (streaming shows as many small reads)."""
        self._sel = selectors.DefaultSelector()
        assert self.proc.stdout is not None
        self._sel.register(self.proc.stdout, selectors.EVENT_READ)

    def type(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def until(self, pattern: str, timeout_s: float = 30.0) -> str:
        """Read until ``pattern`` (a regex) matches the output; the output so far."""
        deadline = time.monotonic() + timeout_s
        assert self.proc.stdout is not None
        while not re.search(pattern, self.out):
            left = deadline - time.monotonic()
            if left <= 0 or not self._sel.select(left):
                self.close()
                pytest.fail(f"no {pattern!r} within {timeout_s} s; stdout:\n{self.out}\nstderr:\n{self.err}")
            block = os.read(self.proc.stdout.fileno(), 65536).decode()
            if not block:
                self.close()
                pytest.fail(f"the console exited before {pattern!r}; stdout:\n{self.out}\nstderr:\n{self.err}")
            self.reads.append(block)
            self.out += block
        return self.out

    def finish(self, timeout_s: float = 30.0) -> int:
        """End of input: the console answers what is pending and exits."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        rest = self.proc.stdout.read().decode()
        self.out += rest
        code = self.proc.wait(timeout_s)
        self.err = self.proc.stderr.read().decode() if self.proc.stderr else ""
        return code

    @property
    def lines(self) -> list[str]:
        return self.out.splitlines()

    err = ""

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stderr is not None and not self.err:
            self.err = self.proc.stderr.read().decode()


@pytest.fixture
def tools_config(tmp_path: Path) -> Path:
    (tmp_path / "console_tools.py").write_text(TOOLS_MODULE + TRIGGER, encoding="utf-8")
    return write_config(tmp_path, sink="file", extra=TOOLS_AGENTS, name="tools.yaml")


def _slow_config(tmp_path: Path, words: int, delay_s: float) -> tuple[Path, str]:
    story = " ".join(f"word{i}" for i in range(words)) + "."
    text = write_config(tmp_path).read_text()
    text = text.replace(
        '{default: "Hello from the robot. How can I help?"}', f'{{default: "{story}", token_delay_s: {delay_s}}}'
    )
    path = tmp_path / "slow.yaml"
    path.write_text(text, encoding="utf-8")
    return path, story


def test_replies_stream_word_by_word_one_line_per_reply_across_turns(tmp_path):
    config, story = _slow_config(tmp_path, words=30, delay_s=0.03)
    console = Console(str(config), cwd=tmp_path)
    try:
        for n, question in enumerate(["tell me a story", "and another one"]):
            console.type(question)
            # The first word is on the screen while the rest is still being written.
            shown = console.until(rf"(?s)(scripted: .*){{{n + 1}}}word0")
            assert shown.count("word29") == n, "the reply was printed whole, not streamed"
            console.until(rf"(?s)(word29\.  \[[0-9.]+ s\]\n.*){{{n + 1}}}")
        code = console.finish()
    finally:
        console.close()
    assert code == 0, console.err
    replies = [line for line in console.lines if line.startswith("scripted: ")]
    assert [re.sub(r"  \[[0-9.]+ s\]$", "", r) for r in replies] == [f"scripted: {story}"] * 2
    assert [line for line in console.lines if line.startswith("you: ")] == [
        "you: tell me a story",
        "you: and another one",
    ]
    assert len(console.reads) > 10, f"the replies came in {len(console.reads)} pieces"


def test_tool_calls_and_skill_progress_show_as_they_happen_and_background_replies_are_visible(tools_config, tmp_path):
    console = Console(str(tools_config), "--output", str(tmp_path / "reply.wav"), cwd=tmp_path, pythonpath=tmp_path)
    try:
        console.type("wave 2 times")
        console.until(r"scripted: waved 2 times")
        console.type("patrol 3 laps")
        console.until(r"\[night_watch\] Noted: The skill patrol succeeded\.")
        code = console.finish()
    finally:
        console.close()
    assert code == 0, console.err
    lines = [line.strip() for line in console.lines]
    order = [
        "you: wave 2 times",
        "-> wave(times=2)",
        "<- wave: waved 2 times",
        "you: patrol 3 laps",
        "-> patrol(laps=3)",
        "~ patrol started",
        '~ patrol: {"lap": 1}',
        "~ patrol succeeded",
    ]
    positions = [lines.index(item) for item in order]
    assert positions == sorted(positions), lines
    assert any(line.startswith("scripted: waved 2 times  [") for line in lines), lines
    # The watcher's answer is its own line, named after the background agent, never as the robot's reply.
    assert "[night_watch] Noted: The skill patrol succeeded." in lines, lines
    assert not any(line.startswith("scripted: Noted") for line in lines)


def test_a_typed_stop_prints_what_it_cancelled_and_speaks_its_confirmation(tools_config, tmp_path):
    reply = tmp_path / "reply.wav"
    console = Console(str(tools_config), "--output", str(reply), cwd=tmp_path, pythonpath=tmp_path)
    try:
        console.type("patrol 1000 laps")
        console.until(r"~ patrol started")
        typed = time.monotonic()
        console.type("stop")
        console.until(r"scripted: Stopped\.  \[")
        stop_s = time.monotonic() - typed
        console.until(r"\[night_watch\] Noted: The skill patrol cancelled\.")
        console.type("wave")
        console.until(r"scripted: waved 1 times")
        code = console.finish()
    finally:
        console.close()
    assert code == 0, console.err
    lines = [line.strip() for line in console.lines]
    stop_line = next(line for line in lines if line.startswith("stop ("))
    assert "skill patrol" in stop_line, stop_line
    assert lines.index("~ patrol cancelled: safety stop") < lines.index(
        next(x for x in lines if x.startswith("scripted: Stopped."))
    )
    # A reply another line cuts into (here the background agent's note) carries on, whole, on a
    # new line: the last "Stopped." line is the finished one, ending with its latency.
    confirmation = [line for line in lines if line.startswith("scripted: Stopped.")][-1]
    assert "to audio" in confirmation, f"the confirmation was printed but not played: {lines}"
    assert stop_s < 2.0, f"the stop took {stop_s:.2f} s to confirm"
    with wave.open(str(reply)) as w:
        assert w.getnframes() >= FakeTTS(sample_rate_hz=16000).samples_for("Stopped.")


def test_a_spoken_stop_prints_and_speaks_its_confirmation(tools_config, tmp_path):
    """A WAV played in real time: "patrol 1000 laps", then "stop" (scripted STT on a fake VAD)."""
    config = tools_config.read_text().replace(
        "audio:\n",
        "stt:\n  engine: edgevox.testing:FakeSTT\n  options: {script: [patrol 1000 laps, stop]}\nvad:\n  engine: edgevox.testing:FakeVAD\n  options: {frame_ms: 20}\naudio:\n",
        1,
    )
    spoken = tmp_path / "spoken.yaml"
    spoken.write_text(config, encoding="utf-8")
    rate = 16000
    t = np.arange(int(0.5 * rate)) / rate
    tone = (0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)
    pause = np.zeros(int(3.0 * rate), dtype=np.float32)  # time for the patrol to start, even on a busy CI machine
    silence = np.zeros(int(1.0 * rate), dtype=np.float32)
    write_wav(tmp_path / "said.wav", np.concatenate([silence[:4000], tone, pause, tone, silence]), rate)
    console = Console(
        str(spoken), "--input", str(tmp_path / "said.wav"), "--output", str(tmp_path / "reply.wav"),
        cwd=tmp_path, pythonpath=tmp_path,
    )  # fmt: skip
    try:
        code = console.finish(timeout_s=60)
    finally:
        console.close()
    assert code == 0, console.err
    lines = [line.strip() for line in console.lines]
    assert "you: patrol 1000 laps" in lines and "~ patrol started" in lines, lines
    assert any(line.startswith("stop (stop): ") and "skill patrol" in line for line in lines), lines
    assert "~ patrol cancelled: safety stop" in lines, lines
    assert any(line.startswith("scripted: Stopped.") and "to audio" in line for line in lines), lines


def test_run_shows_the_console_on_a_terminal_and_one_line_per_turn_in_a_pipe(tools_config, tmp_path):
    import pty

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(tmp_path)]), "TERM": "dumb"}
    main_fd, term_fd = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "edgevox", "run", str(tools_config), "--text", "--output", str(tmp_path / "a.wav")],
        stdin=term_fd, stdout=term_fd, stderr=term_fd, env=env, cwd=tmp_path,
    )  # fmt: skip
    os.close(term_fd)
    seen = b""
    try:
        os.write(main_fd, b"wave 2 times\n")
        deadline = time.monotonic() + 30
        while b"scripted: waved 2 times" not in seen and time.monotonic() < deadline:
            ready = selectors.DefaultSelector()
            ready.register(main_fd, selectors.EVENT_READ)
            if ready.select(max(0.0, deadline - time.monotonic())):
                try:
                    seen += os.read(main_fd, 65536)
                except OSError:  # the run ended: its terminal is gone
                    break
            ready.close()
        os.write(main_fd, b"\x04")  # end of input
        code = proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(main_fd)
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", seen.decode(errors="replace"))
    assert code == 0, shown
    assert "-> wave(times=2)" in shown and "<- wave: waved 2 times" in shown, shown

    piped = subprocess.run(
        [sys.executable, "-m", "edgevox", "run", str(tools_config), "--text", "--output", str(tmp_path / "b.wav")],
        input="wave 2 times\n", capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60,
    )  # fmt: skip
    assert piped.returncode == 0, piped.stderr
    assert "-> wave" not in piped.stdout and "scripted: waved 2 times" in piped.stdout
