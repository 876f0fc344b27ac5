"""Import the ``package.module:attribute`` references written in a config.

The schema only checks their shape; they are imported when the application is built
(or by ``edgevox check``), and a failure names the key path, the reference and why:
``agents.robot.tools.0: cannot import 'my_robot.tools:move': no module named 'my_robot' ...``.

Where a module is looked for, in this order:

1. ``sys.path`` as the process has it: the installed packages and ``PYTHONPATH``;
2. the folder of the config file (:func:`search_folders`, which :meth:`edgevox.app.App.build`
   enters with the folder :func:`~edgevox.config.load_config` recorded);
3. the working directory.

So ``my_tools.py`` next to ``my_robot.yaml``, or in the folder ``edgevox`` runs from, is found
without ``PYTHONPATH=.``. The two folders come *after* the installed packages: a file named
like an installed module (``yaml.py``, ``queue.py``) does not shadow it for the whole process
(rename the file). They are on ``sys.path`` only while a reference is being imported, then
removed again (each added once, and only if it was not there already), so other code never
sees them; a module imported that way stays imported, with the imports it made at the time.

The resolution itself is :func:`pkgutil.resolve_name` (the standard library's reader of
``module:attribute`` names); this module adds the folders and turns its exceptions into one
:class:`~edgevox.errors.ConfigError` line with the fix. The rejected alternative, a hand-written
``import_module`` + ``getattr`` walk, did the same with more code.
"""

from __future__ import annotations

import contextlib
import contextvars
import difflib
import os
import pkgutil
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from edgevox.errors import ConfigError

_FOLDERS: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar("edgevox_ref_folders", default=())
"""Config folders to search, set by :func:`search_folders` for the code that runs inside it."""
_PATH_LOCK = threading.RLock()
"""``sys.path`` belongs to the process: one resolution at a time changes it."""


@contextlib.contextmanager
def search_folders(*folders: str | os.PathLike[str] | None) -> Iterator[None]:
    """References imported inside this block are also looked for in ``folders`` (after the
    installed packages, before the working directory). ``None`` entries are skipped."""
    added = tuple(str(Path(f).resolve()) for f in folders if f is not None)
    token = _FOLDERS.set(_FOLDERS.get() + added)
    try:
        yield
    finally:
        _FOLDERS.reset(token)


def import_ref(ref: str, *, where: str) -> Any:
    """The object ``ref`` (``module:attr.sub``) names; :class:`ConfigError` naming ``where`` if not."""
    module_name, _, attr_path = ref.partition(":")
    if not module_name or not attr_path:
        raise ConfigError(f"{where}: {ref!r} is not a 'package.module:attribute' reference")
    folders = [] if module_name in sys.modules else _search_path()  # imported already: nothing to look for
    try:
        with _on_sys_path(folders):
            return pkgutil.resolve_name(ref)
    except ModuleNotFoundError as exc:
        missing = exc.name or module_name
        if missing != module_name and not module_name.startswith(missing + "."):
            raise ConfigError(  # the module exists; something it imports does not
                f"{where}: cannot import {ref!r}: importing {module_name} needs {missing!r}, "
                f"which is not installed (pip install it, or fix the import in {module_name})"
            ) from None
        raise ConfigError(
            f"{where}: cannot import {ref!r}: no module named {missing!r} (looked in the installed "
            f"packages, PYTHONPATH and {' and '.join(folders)}: install it or put the file there)"
        ) from None
    except SyntaxError as exc:
        at = f"{exc.filename}:{exc.lineno}" if exc.filename else module_name
        raise ConfigError(f"{where}: cannot import {ref!r}: {at}: {exc.msg}; fix the syntax error there") from None
    except SystemExit as exc:
        raise ConfigError(
            f"{where}: cannot import {ref!r}: importing {module_name} called sys.exit({exc.code!r}); "
            "a module used by a config must not exit when imported"
        ) from None
    except AttributeError as exc:
        module = sys.modules.get(module_name)
        if module is None or not _raised_by_lookup(exc):
            raise _import_failed(ref, where, module_name, exc) from None
        raise _missing_attribute(ref, where, module, attr_path) from None
    except Exception as exc:  # noqa: BLE001 - any error raised by the user's module at import
        raise _import_failed(ref, where, module_name, exc) from None


def _search_path() -> list[str]:
    """The folders added for a resolution: the config folders, then the working directory."""
    out: list[str] = []
    for folder in (*_FOLDERS.get(), os.getcwd()):
        if folder not in out:
            out.append(folder)
    return out


@contextlib.contextmanager
def _on_sys_path(folders: list[str]) -> Iterator[None]:
    if not folders:
        yield
        return
    with _PATH_LOCK:
        present = {os.path.abspath(p or os.curdir) for p in sys.path}
        added = [f for f in folders if f not in present]
        sys.path.extend(added)
        try:
            yield
        finally:
            for folder in added:
                with contextlib.suppress(ValueError):  # the imported code removed it itself
                    sys.path.remove(folder)


def _raised_by_lookup(exc: AttributeError) -> bool:
    """True when the attribute walk itself failed (not code inside the module at import)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and tb.tb_frame.f_code.co_filename == pkgutil.__file__


def _missing_attribute(ref: str, where: str, module: Any, attr_path: str) -> ConfigError:
    obj: Any = module
    for part in attr_path.split("."):
        if not hasattr(obj, part):
            names = [n for n in dir(obj) if not n.startswith("_")]
            close = difflib.get_close_matches(part, names, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            return ConfigError(f"{where}: {ref!r}: {module.__name__} has no attribute {part!r}{hint}")
        obj = getattr(obj, part)
    return ConfigError(f"{where}: {ref!r}: an attribute lookup failed in {module.__name__}")


def _import_failed(ref: str, where: str, module_name: str, exc: BaseException) -> ConfigError:
    return ConfigError(
        f"{where}: cannot import {ref!r}: importing {module_name} raised {_describe(exc)}; "
        "fix that module (run `python -c 'import " + module_name + "'` to see the traceback)"
    )


def _describe(exc: BaseException) -> str:
    """``RuntimeError: boom (tools.py:3)``: the error and the innermost line that raised it."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    where = f" ({tb.tb_frame.f_code.co_filename.rsplit('/', 1)[-1]}:{tb.tb_lineno})" if tb is not None else ""
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}{': ' + text if text else ''}{where}"
