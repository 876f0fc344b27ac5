"""``edgevox console``: run an application and watch it work, in a terminal or a pipe.

``console CONFIG`` takes the options of ``run`` (one registration,
:func:`edgevox.cli.run_cmd.add_run_options`) and runs the same flow (load, build, start,
drive, shut down, exit code); what differs is the view
(:class:`~edgevox.cli.console_view.ConsoleView`): replies stream word by word, tool calls and
skills show as they happen, a stop prints what it cancelled and its spoken confirmation, and
background agents' replies appear as ``[name] ...``. ``run`` shows the same view on a terminal;
``console`` shows it everywhere, a pipe included (so a script or a test sees the stream), and
``--json`` gives the JSON event lines instead, as for ``run``.
"""

from __future__ import annotations

import argparse
from typing import Any

from edgevox.cli.run_cmd import EXIT_STATUS_HELP, add_run_options, cmd_run


def register(subparsers: Any) -> None:
    console = subparsers.add_parser(
        "console",
        help="run an application and watch it: streamed replies, tool calls, skills, stops",
        description="Run the application described by CONFIG like `run`, showing replies as they are "
        "written, tool calls, skill progress, safety stops and background agents' replies.",
        epilog=EXIT_STATUS_HELP,
    )
    add_run_options(console)
    console.set_defaults(func=cmd_console)


def cmd_console(args: argparse.Namespace) -> int:
    args.console = True
    return cmd_run(args)
