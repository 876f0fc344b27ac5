"""The ``edgevox`` command line.

Each command group lives in its own module under ``edgevox/cli/`` and exposes
``register(subparsers)``, which adds its parser(s) with ``set_defaults(func=...)``;
``func(args)`` returns the exit code. Only the CLI prints, configures logging or
exits; library code never does. Errors derived from ``EdgeVoxError`` are shown as
one clear line (no traceback) and exit with status 2.

Ctrl-C exits with status 130 and no traceback wherever it lands before the application
runs: while the command modules are imported, while the arguments are read, while a config's
own modules are imported or the models load (the running application handles Ctrl-C itself
and shuts down cleanly). So this module imports only ``sys`` at its top: every other import
happens inside :func:`main`, under its handler. The interpreter's own start-up, before
``main`` is called, is the one place left where Ctrl-C prints Python's traceback.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

# Command modules, in help order. Each has ``register(subparsers)``.
COMMAND_MODULES = (
    "edgevox.cli.run_cmd",  # run, check, devices
    "edgevox.cli.console_cmd",  # console
    "edgevox.cli.models_cmd",  # models list|pull|verify
    "edgevox.cli.bench_cmd",  # bench runtime|latency|...
    "edgevox.cli.eval_cmd",  # eval stt|tools
    "edgevox.cli.ros_cmd",  # ros2, ros1
    "edgevox.cli.fleet_cmd",  # fleet init
)

INTERRUPTED = 130
"""Exit status after Ctrl-C (128 + SIGINT), as shells report it."""


def version() -> str:
    """The installed distribution's version (its metadata), else the package's own."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("edgevox")
    except PackageNotFoundError:  # run from a source tree that was never installed
        import edgevox

        return edgevox.__version__


def _asks_version(argv: Sequence[str]) -> bool:
    """``-V``/``--version`` among the global options (before any command), as argparse reads them."""
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in ("-V", "--version"):
            return True
        if arg == "--log-level":
            i += 2
            continue
        if not arg.startswith("--log-level="):
            return False  # a command, or an option argparse will judge
        i += 1
    return False


def build_parser() -> argparse.ArgumentParser:
    import argparse
    import importlib

    parser = argparse.ArgumentParser(
        prog="edgevox",
        description="Offline, on-device voice agent framework for robots.",
    )
    parser.add_argument("-V", "--version", action="version", version=f"edgevox {version()}")
    parser.add_argument("--log-level", default="WARNING", help="logging level (DEBUG, INFO, WARNING, ERROR)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # command group not built yet
                continue
            raise
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:
        return INTERRUPTED


def _main(argv: Sequence[str] | None) -> int:
    args_in = sys.argv[1:] if argv is None else list(argv)
    if _asks_version(args_in):
        # Answered before any command module is imported (they pull in numpy, rich, the
        # agents...): `edgevox --version` is what scripts and installers call to probe.
        print(f"edgevox {version()}")
        raise SystemExit(0)  # as argparse's version action does

    import logging

    from edgevox.errors import EdgeVoxError

    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    level = getattr(logging, str(args.log_level).upper(), None)
    if not isinstance(level, int):
        parser.error(f"--log-level {args.log_level!r}: expected one of DEBUG, INFO, WARNING, ERROR")
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        return int(args.func(args) or 0)
    except EdgeVoxError as exc:
        print(f"edgevox: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
