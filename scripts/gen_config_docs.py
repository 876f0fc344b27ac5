"""Regenerate docs/config.md from the config schema (tests/config/test_docs.py checks it)."""

from __future__ import annotations

from pathlib import Path

from edgevox.config.docs import render_config_docs


def main() -> int:
    path = Path(__file__).resolve().parents[1] / "docs" / "config.md"
    path.write_text(render_config_docs(), encoding="utf-8")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
