"""``edgevox models list | pull | verify``: see and fetch the models edgevox runs on."""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("models", help="list, pull and verify models (builtin, local, Hugging Face)")
    sub = parser.add_subparsers(dest="models_command", metavar="ACTION")

    p_list = sub.add_parser("list", help="builtin models and models in the Hugging Face cache")
    p_list.set_defaults(func=_list)

    p_pull = sub.add_parser("pull", help="download a model reference (hf:owner/repo/file[@sha256]) and check it")
    p_pull.add_argument("ref", nargs="+", help="model reference(s)")
    p_pull.set_defaults(func=_pull)

    p_verify = sub.add_parser("verify", help="check files exist, hashes match and headers make sense")
    p_verify.add_argument("ref", nargs="*", help="model reference(s); default: every builtin model")
    p_verify.set_defaults(func=_verify)

    def _help(_args: argparse.Namespace) -> int:
        parser.print_help()
        return 2

    parser.set_defaults(func=_help)


def _size(n: int) -> str:
    if not n:
        return "-"
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return str(size)


def _list(_args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from edgevox.models import list_models

    table = Table(title="edgevox models")
    for col in ("reference", "kind", "source", "installed", "size", "path / how to get it"):
        table.add_column(col)
    for info in list_models():
        where = str(info.path) if info.installed else info.fetch_command
        table.add_row(
            info.ref,
            info.kind,
            info.source,
            "[green]yes[/]" if info.installed else "[red]no[/]",
            _size(info.size_bytes),
            where,
        )
    Console().print(table)
    return 0


def _pull(args: argparse.Namespace) -> int:
    from rich.console import Console

    from edgevox.models import pull

    console = Console()
    tqdm_class = _rich_tqdm()
    for ref in args.ref:
        path = pull(ref, tqdm_class=tqdm_class)
        console.print(f"[green]ok[/] {ref} -> {path}")
    return 0


def _rich_tqdm() -> Any:
    """tqdm's rich progress bar if tqdm has it, else None (the Hub's default bar)."""
    try:
        from tqdm.rich import tqdm
    except ImportError:
        return None
    return tqdm


def _verify(args: argparse.Namespace) -> int:
    from rich.console import Console

    from edgevox.models import BUILTIN_MODELS, verify

    console = Console()
    refs = args.ref or list(BUILTIN_MODELS)
    failed = 0
    for ref in refs:
        with console.status(f"verifying {ref} ..."):
            result = verify(ref)
        if result.ok:
            checks = ", ".join(result.checks)
            hashed = sum(1 for k in result.sha256 if k in result.expected_sha256)
            console.print(
                f"[green]ok[/] {ref}: {_size(result.size_bytes)}, {len(result.sha256)} file(s) hashed"
                f" ({hashed} matched known SHA-256), {checks}"
            )
            console.print(f"   {result.path}")
        else:
            failed += 1
            console.print(f"[red]FAILED[/] {ref}")
            for problem in result.problems:
                console.print(f"   - {problem}")
    return 1 if failed else 0
