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
    except ImportError as exc:
        raise ConfigError(f"{where}: cannot import {ref!r}: {exc}") from None
    for part in attr_path.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            names = [n for n in dir(obj) if not n.startswith("_")]
            close = difflib.get_close_matches(part, names, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ConfigError(f"{where}: {ref!r}: {module_name} has no attribute {part!r}{hint}") from None
    return obj
