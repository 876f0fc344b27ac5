"""The ``edgevox`` command line.

Each command group lives in its own module under ``edgevox/cli/`` and exposes
``register(subparsers)``, which adds its parser(s) with ``set_defaults(func=...)``;
``func(args)`` returns the exit code. Only the CLI prints, configures logging or
exits; library code never does. Errors derived from ``EdgeVoxError`` are shown as
one clear line (no traceback) and exit with status 2.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence

# Command modules, in help order. Each has ``register(subparsers)``.
COMMAND_MODULES = (
    "edgevox.cli.run_cmd",  # run, check, devices
    "edgevox.cli.models_cmd",  # models list|pull|verify
    "edgevox.cli.bench_cmd",  # bench runtime|latency|...
    "edgevox.cli.eval_cmd",  # eval stt|tools
    "edgevox.cli.ros_cmd",  # ros2, ros1
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="edgevox",
        description="Offline, on-device voice agent framework for robots.",
    )
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
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
