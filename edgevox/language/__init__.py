"""The language floor: how requests and tools' docstrings are read (see ``docs/language.md``).

Imports nothing of the agents, the voice loop or orchestration. The heavy parts load on first
use (spaCy's pipeline ~1.5 s, WordNet ~1.5 s, pint's registry ~0.4 s); :func:`warm_up` loads
them up front so that no turn pays for it.
"""

from __future__ import annotations


def warm_up(*, lexicon: bool = True) -> None:
    """Load the parser and the unit registry now (and WordNet with ``lexicon``); idempotent."""
    from edgevox.language.nlp import pipeline
    from edgevox.language.units import unit

    pipeline()
    unit("metres")
    if lexicon:
        from edgevox.language.lexicon import relation

        relation("raise", "lift", "v")
