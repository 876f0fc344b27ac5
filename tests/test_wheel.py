"""The built wheel carries everything ``edgevox run`` needs (configs, data files, every package)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_the_wheel_contains_the_configs_and_every_package(tmp_path):
    # Build from a copy so a parallel test run never sees a half-written build/ folder.
    src = tmp_path / "src"
    shutil.copytree(
        REPO,
        src,
        symlinks=True,
        ignore=shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", "*.wav"),
    )
    out = tmp_path / "dist"
    result = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(src)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    (wheel,) = out.glob("edgevox-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for config in (REPO / "configs").rglob("*.yaml"):
        rel = config.relative_to(REPO / "configs").as_posix()
        assert f"edgevox/configs/{rel}" in names, f"configs/{rel} is missing from the wheel"
    for data in (REPO / "edgevox" / "data").glob("*"):
        assert f"edgevox/data/{data.name}" in names, f"data file {data.name} is missing from the wheel"
    packages = {p.parent.relative_to(REPO).as_posix() for p in (REPO / "edgevox").rglob("*.py")}
    for package in packages:
        assert any(n.startswith(package + "/") for n in names), f"package {package} is missing from the wheel"
    assert "edgevox/py.typed" in names, "py.typed is missing from the wheel: type checkers would ignore edgevox's hints"
    entry_points = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    assert "edgevox = edgevox.cli.main:main" in entry_points
