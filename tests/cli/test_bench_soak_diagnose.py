"""``bench soak --diagnose``: the tracemalloc snapshot is not counted as the product's growth (issue 25).

The snapshot taken at the end of warm-up keeps one record per live allocation for the rest of
the run (+241 MB measured with spaCy and WordNet loaded, 1.9 million traces): sampled before
it, the warm-up RSS made every diagnosed soak report ~+450 MB of "growth" in its first interval.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

from edgevox.cli.bench_soak import Soak


def test_the_warm_up_sample_is_taken_after_the_diagnosis_snapshot():
    soak = Soak(argparse.Namespace(diagnose=True), {})
    soak.t0 = time.monotonic()
    soak._sample()
    before = soak.samples[-1]
    tracemalloc.start(1)
    try:
        soak._warm_up_done(None)
        taken = tracemalloc.is_tracing() and soak._snapshot is not None
    finally:
        tracemalloc.stop()
    assert taken
    assert soak.warm is soak.samples[-1]
    assert soak.warm is not before, "the warm-up RSS must include the snapshot the run keeps"
