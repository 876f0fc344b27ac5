"""docs/config.md is generated from the schema; these tests keep the two in sync."""

from __future__ import annotations

from pathlib import Path

from edgevox.config.docs import field_paths, render_config_docs

DOC = Path(__file__).resolve().parents[2] / "docs" / "config.md"


def test_every_key_path_of_the_schema_is_documented():
    text = DOC.read_text(encoding="utf-8")
    missing = [path for path in field_paths() if f"`{path}`" not in text]
    assert not missing, f"docs/config.md misses {missing}: run `python scripts/gen_config_docs.py`"


def test_docs_config_md_is_up_to_date_with_the_schema():
    assert DOC.read_text(encoding="utf-8") == render_config_docs(), "run `python scripts/gen_config_docs.py`"


def test_every_documented_key_has_a_description_and_a_default():
    from edgevox.config.docs import sections

    for section in sections():
        for key in section.keys:
            assert key.description, f"{key.path} has no description"
            assert key.default, f"{key.path} has no default"
