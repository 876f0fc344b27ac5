"""Import the ``package.module:attribute`` references written in a config.

The schema only checks their shape; they are imported when the application is built
(or by ``edgevox check``), and a failure names the key path, the reference and why:
``agents.robot.tools.0: cannot import 'my_robot.tools:move': No module named 'my_robot'``.
"""

from __future__ import annotations

import difflib
import importlib
from typing import Any

from edgevox.errors import ConfigError


def import_ref(ref: str, *, where: str) -> Any:
    """The object ``ref`` (``module:attr.sub``) names; :class:`ConfigError` naming ``where`` if not."""
    module_name, _, attr_path = ref.partition(":")
    if not module_name or not attr_path:
        raise ConfigError(f"{where}: {ref!r} is not a 'package.module:attribute' reference")
    try:
        obj: Any = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise ConfigError(
            f"{where}: cannot import {ref!r}: no module named {exc.name!r} (is it installed / on PYTHONPATH?)"
        ) from None
    except SyntaxError as exc:
        at = f"{exc.filename}:{exc.lineno}" if exc.filename else module_name
        raise ConfigError(f"{where}: cannot import {ref!r}: {at}: {exc.msg}; fix the syntax error there") from None
    except SystemExit as exc:
        raise ConfigError(
            f"{where}: cannot import {ref!r}: importing {module_name} called sys.exit({exc.code!r}); "
            "a module used by a config must not exit when imported"
        ) from None
    except Exception as exc:  # noqa: BLE001 - any error raised by the user's module at import
        raise ConfigError(
            f"{where}: cannot import {ref!r}: importing {module_name} raised {_describe(exc)}; "
            "fix that module (run `python -c 'import " + module_name + "'` to see the traceback)"
        ) from None
    for part in attr_path.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            names = [n for n in dir(obj) if not n.startswith("_")]
            close = difflib.get_close_matches(part, names, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ConfigError(f"{where}: {ref!r}: {module_name} has no attribute {part!r}{hint}") from None
    return obj


def _describe(exc: BaseException) -> str:
    """``RuntimeError: boom (tools.py:3)``: the error and the innermost line that raised it."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    where = f" ({tb.tb_frame.f_code.co_filename.rsplit('/', 1)[-1]}:{tb.tb_lineno})" if tb is not None else ""
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}{': ' + text if text else ''}{where}"
