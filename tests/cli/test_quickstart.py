"""docs/quickstart.md works exactly as written, read from the file itself.

The test walks the page's code blocks in order, in a fresh folder (the working directory,
with no ``PYTHONPATH``) that holds only a link to the repository's ``scripts/`` (the page runs
from the repository's folder): a ``yaml``/``python`` block whose first line is ``# NAME`` is
written to that file (``# NAME  (add at the end)`` appends to it); every line of a ``bash``
block is run with the installed ``edgevox`` (and this ``python``), stdin closed, and must exit
0; an output block that starts with ``$ command`` is run and its output must match the block.
``sh`` blocks (installing, starting PulseAudio by hand) are not run: the private PulseAudio
null sink of :mod:`edgevox.testing.pulse` does the same for the test. The commands load the real
embedded models.
"""

from __future__ import annotations

import json
import os
import queue
import re
import shlex
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = [pytest.mark.models, pytest.mark.audio, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = REPO / "docs" / "quickstart.md"

NOT_RUN = {
    "edgevox run default": "listens to the microphone until Ctrl-C (the --text and --input runs cover it)",
}
"""Commands of the page the test does not run, and why; each must still be on the page."""

_FILE_HEADER = re.compile(r"^# (?P<name>[\w.-]+\.(?:yaml|py))(?P<append>\s+\(add at the end\))?")


@dataclass
class Block:
    lang: str
    text: str
    line: int


def blocks(markdown: str) -> list[Block]:
    out: list[Block] = []
    lines = markdown.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("```"):
            lang, start, body = lines[i][3:].strip(), i + 1, []
            i += 1
            while not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            out.append(Block(lang, "\n".join(body) + "\n", start))
        i += 1
    return out


def commands(block: Block) -> list[list[str]]:
    return [args for line in block.text.splitlines() if (args := shlex.split(line, comments=True))]


def command_line(args: list[str]) -> list[str]:
    programs = {"edgevox": str(Path(sys.executable).with_name("edgevox")), "python": sys.executable}
    assert args[0] in programs, f"the quickstart runs {args[0]!r}; teach the test what that is"
    return [programs[args[0]], *args[1:]]


@pytest.fixture
def user_folder(tmp_path):
    """A folder to run the page from, as a user would: only the repository's scripts/ in it."""
    (tmp_path / "scripts").symlink_to(REPO / "scripts", target_is_directory=True)
    return tmp_path


@pytest.fixture
def user_env(monkeypatch):
    from edgevox.testing.pulse import private_pulseaudio, pulseaudio_installed

    if not pulseaudio_installed():
        pytest.skip("the pulseaudio binary is absent (apt-get install pulseaudio pulseaudio-utils libportaudio2)")
    with private_pulseaudio(rate_hz=16000) as pulse:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        yield {**env, **pulse.env()}


def write_file_block(block: Block, folder: Path) -> bool:
    header = _FILE_HEADER.match(block.text)
    if block.lang not in ("yaml", "python") or header is None:
        return False
    path = folder / header["name"]
    if header["append"]:
        assert path.exists(), f"quickstart.md:{block.line}: adds to {path.name}, which no earlier block wrote"
        path.write_text(path.read_text(encoding="utf-8") + "\n\n" + block.text, encoding="utf-8")
    else:
        path.write_text(block.text, encoding="utf-8")
    return True


def test_the_quickstart_runs_as_written(user_folder, user_env):
    page = QUICKSTART.read_text(encoding="utf-8")
    ran: list[str] = []
    for block in blocks(page):
        if write_file_block(block, user_folder):
            continue
        if block.lang == "bash":
            for args in commands(block):
                if shlex.join(args) in NOT_RUN:
                    continue
                started = time.monotonic()
                proc = subprocess.run(
                    command_line(args),
                    cwd=user_folder,
                    env=user_env,
                    stdin=subprocess.DEVNULL,
                    capture_output=True,
                    text=True,
                    timeout=300,
                )
                assert proc.returncode == 0, (
                    f"quickstart.md:{block.line}: `{shlex.join(args)}` exited {proc.returncode}\n"
                    f"stdout: {proc.stdout[-2000:]}\nstderr: {proc.stderr[-2000:]}"
                )
                assert "Traceback" not in proc.stderr, proc.stderr
                ran.append(f"{time.monotonic() - started:5.1f} s  {shlex.join(args)}")
        elif block.lang == "" and block.text.startswith("$ "):
            first, _, expected = block.text.partition("\n")
            proc = subprocess.run(
                command_line(shlex.split(first[2:])),
                cwd=user_folder,
                env=user_env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert proc.stdout + proc.stderr == expected, f"quickstart.md:{block.line}: `{first[2:]}`"
            ran.append(first)
    for command in NOT_RUN:
        assert f"\n{command} " in page, f"{command!r} is no longer on the page; drop it from NOT_RUN"
    assert (user_folder / "reply.wav").stat().st_size > 10_000  # step 2's spoken reply
    print("\n".join(ran))


def test_the_typo_example_is_the_error_a_user_gets(user_folder, user_env):
    """Section 3 shows the error for `stt.vocabuary` written in my_robot.yaml: it is the real one."""
    page = QUICKSTART.read_text(encoding="utf-8")
    all_blocks = blocks(page)
    config = next(b for b in all_blocks if b.text.startswith("# my_robot.yaml\n"))
    shown = next(b for b in all_blocks if "unknown key 'stt.vocabuary'" in b.text)
    (user_folder / "my_robot.yaml").write_text(config.text.replace("vocabulary", "vocabuary", 1), encoding="utf-8")
    proc = subprocess.run(
        command_line(["edgevox", "check", "my_robot.yaml"]),
        cwd=user_folder,
        env=user_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and proc.stderr == shown.text


def test_the_background_agent_example_replies_next_to_the_conversation(user_folder, user_env):
    """Section 5's files, from the page, run as its command says (plus --json, to read the
    events): typing a garden request gets Rex's answer and the log keeper's line."""
    page = QUICKSTART.read_text(encoding="utf-8")
    for block in blocks(page):
        write_file_block(block, user_folder)
    command = next(args for b in blocks(page) if b.lang == "bash" for args in commands(b) if "garden.yaml" in args)
    proc = subprocess.Popen(
        [*command_line(command), "--json"],
        cwd=user_folder,
        env=user_env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("water the roses\n")
        proc.stdin.flush()
        lines: queue.Queue[str] = queue.Queue()
        reader = threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout], name="test-stdout", daemon=True)
        reader.start()
        log_line, turn_done = None, None
        deadline = time.monotonic() + 240
        while log_line is None or turn_done is None:
            event = json.loads(lines.get(timeout=max(0.1, deadline - time.monotonic())))
            if event["kind"] == "agent.reply" and event.get("source") == "log_keeper":
                log_line = event["text"]
            if event["kind"] == "voice.turn_done":
                turn_done = event
        out, err = proc.communicate("", timeout=60)  # end of input: the run ends
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert turn_done is not None and turn_done["status"] == "completed" and turn_done["reply_text"], turn_done
    assert log_line and log_line.strip(), f"the background agent never replied; stderr: {err[-2000:]}"
