"""``edgevox fleet init``: identities for a small fleet (a CA, certificates, Zenoh TLS and access control)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from edgevox.cli.args import COUNT


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("fleet", help="identities for a fleet over Zenoh: who may connect and command")
    sub = parser.add_subparsers(dest="fleet_command", metavar="ACTION")
    p_init = sub.add_parser(
        "init",
        help="write a CA, a certificate per member, and each member's Zenoh config (mutual TLS, access control) "
        "and bridges.zenoh section",
    )
    p_init.add_argument("out_dir", type=Path, help="directory to write into (must not hold a fleet already)")
    p_init.add_argument("--fleet", default="edgevox/fleet", help="the operator's namespace (default edgevox/fleet)")
    p_init.add_argument("--operator", default="operator", help="the operator's name (default operator)")
    p_init.add_argument(
        "--robot",
        action="append",
        default=[],
        metavar="NAME=HOST:PORT",
        help="a robot and the TLS endpoint it listens on, e.g. r1=robot1.local:7447 (repeat for each robot)",
    )
    p_init.add_argument("--days", type=COUNT, default=365, help="certificate lifetime in days (default 365)")
    p_init.add_argument(
        "--install-dir",
        default=None,
        help="where the files will be on each machine, written into the configs (default: OUT_DIR)",
    )
    p_init.set_defaults(func=_init)

    def _help(_args: argparse.Namespace) -> int:
        parser.print_help()
        return 2

    parser.set_defaults(func=_help)


def _init(args: argparse.Namespace) -> int:
    from edgevox.errors import ConfigError
    from edgevox.integrations.zenoh_identity import init_fleet, parse_robot

    if not args.robot:
        raise ConfigError("edgevox fleet init: name at least one robot, e.g. --robot r1=robot1.local:7447")
    robots = [parse_robot(text) for text in args.robot]
    written = init_fleet(
        args.out_dir,
        fleet=args.fleet,
        operator=args.operator,
        robots=robots,
        days=args.days,
        install_dir=args.install_dir,
    )
    print(f"wrote {len(written)} files to {args.out_dir}:")
    for member in [args.operator, *(r.name for r in robots)]:
        print(
            f"  {member}: {member}.yaml (merge into its config), {member}.zenoh.json5, {member}.pem, {member}.key, "
            f"ca.pem"
        )
    print("  ca.key signs new members: keep it off the robots.")
    return 0
