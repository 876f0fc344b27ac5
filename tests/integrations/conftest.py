"""Shared helpers of the bridge tests: free loopback ports, a child-process line protocol,
and a guard that no bridge thread outlives its test."""

from __future__ import annotations

import os
import queue
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Child:
    """A helper process driven line by line over stdin/stdout (stderr kept for failures)."""

    def __init__(self, argv: list[str], env: dict[str, str] | None = None) -> None:
        full_env = dict(os.environ)
        full_env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), full_env.get("PYTHONPATH", "")]))
        full_env.update(env or {})
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=full_env,
        )
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._backlog: list[str] = []
        self._reader = threading.Thread(target=self._read, name="test-child-reader", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line.rstrip("\n"))
        self._lines.put(None)

    def expect(self, prefix: str, timeout_s: float = 30.0, *, skip_other: bool = False) -> str:
        """The next stdout line; fails the test (with the child's stderr) unless it starts with prefix.
        ``skip_other``: pass over lines that do not (e.g. rospy's "master may not be running yet")."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                self.kill()
                pytest.fail(f"child sent nothing within {timeout_s} s (expected {prefix!r}); stderr:\n{self.stderr()}")
            if not (skip_other and line is not None and not line.startswith(prefix)):
                break
        if line is None or not line.startswith(prefix):
            self.kill()
            pytest.fail(f"child sent {line!r}, expected {prefix!r}; stderr:\n{self.stderr()}")
        return line

    def wait_line(self, predicate, timeout_s: float = 30.0) -> str:
        """The first stdout line (in order) for which ``predicate(line)`` holds; lines passed
        over are kept for later calls. Fails the test (with stderr) after ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        for i, line in enumerate(self._backlog):
            if predicate(line):
                return self._backlog.pop(i)
        while True:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                self.kill()
                pytest.fail(f"child sent no matching line within {timeout_s} s; stderr:\n{self.stderr()}")
            if line is None:
                self.kill()
                pytest.fail(f"child exited without a matching line; stderr:\n{self.stderr()}")
            if predicate(line):
                return line
            self._backlog.append(line)

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def stderr(self) -> str:
        if self.proc.poll() is None:
            return "(still running)"
        assert self.proc.stderr is not None
        return self.proc.stderr.read()[-4000:]

    def wait(self, timeout_s: float = 30.0) -> int:
        try:
            return self.proc.wait(timeout_s)
        finally:
            self._reader.join(5)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def close(self) -> None:
        self.kill()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
        self._reader.join(5)


@pytest.fixture
def child_process():
    children: list[Child] = []

    def start(argv: list[str], env: dict[str, str] | None = None) -> Child:
        child = Child(argv, env)
        children.append(child)
        return child

    yield start
    for child in children:
        child.close()


@pytest.fixture(autouse=True)
def no_leaked_bridge_threads():
    """Every thread a bridge starts is named ``edgevox-*``; none may survive the test."""
    before = {t.ident for t in threading.enumerate()}
    yield
    leaked = [t.name for t in threading.enumerate() if t.ident not in before and t.name.startswith("edgevox-")]
    assert not leaked, f"bridge threads leaked: {leaked}"


PYTHON = sys.executable


class Collector:
    """Events seen on a bus, with a wait for a condition on them."""

    def __init__(self, bus, selector="*") -> None:
        self.events = []
        self._cond = threading.Condition()
        bus.subscribe(selector, self._add)

    def _add(self, event) -> None:
        with self._cond:
            self.events.append(event)
            self._cond.notify_all()

    def wait_for(self, predicate, timeout_s: float = 10.0) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: any(predicate(e) for e in self.events), timeout_s)

    def texts(self) -> list[str]:
        with self._cond:
            return [e.text for e in self.events if e.kind == "voice.transcript"]
