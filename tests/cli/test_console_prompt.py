"""Typing on a terminal: what the user typed is shown once (the terminal's own echo after
``you> ``), each reply once, and nothing is written into the line being typed: every printed
line first erases the prompt line (``\\r`` + erase line) and draws the prompt again under it.
Run in a pseudo-terminal, as a user types."""

from __future__ import annotations

import os
import pty
import re
import selectors
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .test_console import _slow_config

REPO = Path(__file__).resolve().parents[2]
ERASE = "\r\x1b[K"


class Terminal:
    """``edgevox <args>`` on a pseudo-terminal (stdin and stdout), read as it comes."""

    def __init__(self, *args: str, cwd: Path) -> None:
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
            "TERM": "dumb",
        }
        self.fd, term = pty.openpty()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "edgevox", *args], stdin=term, stdout=term, stderr=term, env=env, cwd=cwd
        )
        os.close(term)
        self.raw = ""

    def type(self, keys: str) -> None:
        os.write(self.fd, keys.encode())

    def until(self, pattern: str, timeout_s: float = 60.0) -> None:
        deadline = time.monotonic() + timeout_s
        sel = selectors.DefaultSelector()
        sel.register(self.fd, selectors.EVENT_READ)
        try:
            while not re.search(pattern, self.raw):
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    pytest.fail(f"no {pattern!r} within {timeout_s} s; the terminal shows:\n{self.raw!r}")
                try:
                    self.raw += os.read(self.fd, 65536).decode(errors="replace")
                except OSError:  # the program ended: its terminal is gone
                    pytest.fail(f"ended before {pattern!r}; the terminal shows:\n{self.raw!r}")
        finally:
            sel.close()

    def close(self) -> int:
        if self.proc.poll() is None:
            try:
                code = self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                code = self.proc.wait()
        else:
            code = self.proc.returncode
        os.close(self.fd)
        return code


@pytest.mark.parametrize("command", ["console", "run"])
def test_typed_lines_and_replies_show_once_and_never_land_on_the_input_line(tmp_path, command):
    config, story = _slow_config(tmp_path, words=30, delay_s=0.02)
    term = Terminal(command, str(config), "--text", cwd=tmp_path)
    try:
        term.until(r"you> $")
        term.type("tell me a story\n")
        term.type("and ")  # typing the next line while the reply is being written
        term.until(r"word29\.  \[")
        term.type("another\n")
        term.until(r"(?s)word29\..*word29\.  \[.*you> $")
        term.type("\x04")  # end of input
        term.until(r"\r\x1b\[K$")
    finally:
        code = term.close()
    assert code == 0, term.raw
    shown = term.raw
    assert "you: " not in shown, "a typed line was echoed a second time"
    assert shown.count(f"scripted: {story}") == 2, shown
    # Every reply starts on a line of its own: where the prompt (and what was being typed) was,
    # erased first. (What the screen shows of a line is what follows its last erase.)
    for piece in shown.split("\n"):
        if "scripted:" in piece:
            assert piece.rsplit(ERASE, 1)[-1].startswith("scripted:"), repr(piece)
    # ...and the prompt is drawn again under each reply.
    assert shown.count("\r\nyou> ") >= 2, shown
