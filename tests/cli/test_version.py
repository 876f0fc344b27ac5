"""``edgevox --version`` answers before any command module is imported (it took seconds when it
imported numpy, rich, the agents and the voice loop to build every command's parser)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

PROBE = """\
import sys
from edgevox.cli.main import main, version
try:
    code = main(sys.argv[1:])
except SystemExit as exc:  # as argparse's version action does
    code = exc.code
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("edgevox", "numpy", "rich", "pydantic", "yaml"))
print(code, loaded)
"""


@pytest.mark.parametrize("argv", [["--version"], ["-V"], ["--log-level", "DEBUG", "--version"]])
def test_version_imports_no_command_module(argv):
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, env=env, cwd=REPO, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    version_line, result = proc.stdout.splitlines()
    assert version_line.startswith("edgevox ") and len(version_line.split()) == 2
    assert result == "0 ['edgevox', 'edgevox.cli', 'edgevox.cli.main']", result


def test_version_after_a_command_is_still_argparse_s(capsys):
    """``edgevox run --version`` is not the global option: argparse says what is wrong."""
    from edgevox.cli.main import main

    with pytest.raises(SystemExit) as exc:
        main(["run", "x.yaml", "--version"])
    assert exc.value.code == 2
    assert "unrecognized arguments: --version" in capsys.readouterr().err
