"""``module:function`` references: where modules are looked for (installed packages, the
config file's folder, the working directory), that ``sys.path`` is left as it was, and the
one-line errors."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import pytest

from edgevox.config.loader import config_folder, load_config, parse_config
from edgevox.config.refs import import_ref, search_folders
from edgevox.errors import ConfigError

_names = itertools.count()


@pytest.fixture
def module(tmp_path):
    """Write a uniquely named module into a folder; forget it from sys.modules afterwards."""
    made: list[str] = []

    def write(source: str, folder: Path | None = None) -> str:
        name = f"refs_case_{next(_names)}_{tmp_path.name.replace('-', '_')}"
        target = folder or tmp_path
        target.mkdir(parents=True, exist_ok=True)
        (target / f"{name}.py").write_text(source, encoding="utf-8")
        made.append(name)
        return name

    yield write
    for name in made:
        sys.modules.pop(name, None)


def test_a_module_in_the_working_directory_is_found_without_pythonpath(tmp_path, monkeypatch, module):
    name = module("def move():\n    return 'moving'\n")
    monkeypatch.chdir(tmp_path)
    before = list(sys.path)
    assert import_ref(f"{name}:move", where="agents.a.tools.0")() == "moving"
    assert sys.path == before, "the working directory was left on sys.path"


def test_a_module_beside_the_config_file_is_found_from_another_working_directory(tmp_path, monkeypatch, module):
    robot = tmp_path / "robot"
    name = module("def move():\n    return 'from the config folder'\n", folder=robot)
    config_file = robot / "robot.yaml"
    config_file.write_text(f"agents:\n  a:\n    tools: [{name}:move]\n", encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    config = load_config(config_file)
    assert config_folder(config) == str(robot.resolve())
    before = list(sys.path)
    with search_folders(config_folder(config)):
        assert import_ref(f"{name}:move", where="agents.a.tools.0")() == "from the config folder"
    assert sys.path == before
    # Outside the block the folder is not searched (a fresh module name proves it).
    other = module("X = 1\n", folder=robot)
    with pytest.raises(ConfigError, match=f"no module named '{other}'"):
        import_ref(f"{other}:X", where="w")


def test_the_config_folder_is_searched_before_the_working_directory(tmp_path, monkeypatch, module):
    name = module("WHERE = 'config folder'\n", folder=tmp_path / "cfg")
    (tmp_path / "cwd").mkdir()
    (tmp_path / "cwd" / f"{name}.py").write_text("WHERE = 'working directory'\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path / "cwd")
    with search_folders(tmp_path / "cfg"):
        assert import_ref(f"{name}:WHERE", where="w") == "config folder"


def test_an_installed_module_wins_over_a_file_of_the_same_name_in_the_working_directory(tmp_path, monkeypatch):
    (tmp_path / "colorsys.py").write_text("def rgb_to_hsv(*a):\n    return 'shadowed'\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert import_ref("colorsys:rgb_to_hsv", where="w")(1.0, 0.0, 0.0) == (0.0, 1.0, 1.0)


def test_a_missing_module_names_the_key_and_the_folders_looked_in(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with search_folders(tmp_path / "cfg"), pytest.raises(ConfigError) as caught:
        import_ref("no_such_tools:move", where="agents.a.tools.0")
    message = str(caught.value)
    assert message.startswith("agents.a.tools.0: cannot import 'no_such_tools:move': no module named 'no_such_tools'")
    assert f"{(tmp_path / 'cfg').resolve()} and {tmp_path}" in message and "\n" not in message


def test_a_module_whose_own_import_is_missing_says_what_to_install(tmp_path, monkeypatch, module):
    name = module("import no_such_dependency_xyz\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=f"importing {name} needs 'no_such_dependency_xyz', which is not installed"):
        import_ref(f"{name}:move", where="w")


def test_an_error_raised_while_importing_names_the_error_and_its_line(tmp_path, monkeypatch, module):
    name = module("x = 1\nraise RuntimeError('boom')\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=rf"importing {name} raised RuntimeError: boom \({name}.py:2\)"):
        import_ref(f"{name}:move", where="w")


def test_an_attribute_error_inside_the_module_is_not_reported_as_a_missing_name(tmp_path, monkeypatch, module):
    name = module("import os\nos.no_such_function()\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=rf"importing {name} raised AttributeError: .*\({name}.py:2\)"):
        import_ref(f"{name}:move", where="w")


def test_a_missing_attribute_suggests_the_nearest_name_at_any_depth(module, tmp_path, monkeypatch):
    name = module("class Robot:\n    def move(self):\n        pass\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(
        ConfigError, match=rf"'{name}:Robot.mvoe': {name} has no attribute 'mvoe'; did you mean 'move'\?"
    ):
        import_ref(f"{name}:Robot.mvoe", where="w")


def test_a_syntax_error_and_an_exit_at_import_are_one_line_each(module, tmp_path, monkeypatch):
    broken = module("def move(:\n")
    exits = module("import sys\nsys.exit(3)\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=rf"{broken}.py:1: .*fix the syntax error there"):
        import_ref(f"{broken}:move", where="w")
    with pytest.raises(ConfigError, match=r"called sys.exit\(3\); a module used by a config must not exit"):
        import_ref(f"{exits}:move", where="w")


def test_sys_path_is_unchanged_after_a_failed_resolution(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    before = list(sys.path)
    with search_folders(tmp_path / "cfg"), pytest.raises(ConfigError):
        import_ref("no_such_tools:move", where="w")
    assert sys.path == before


def test_a_config_given_as_text_has_no_folder():
    assert config_folder(parse_config("name: x\n", env={})) is None
