"""The STT engine's memory stays flat over utterances of every length (issue 25: the soak's
steady RSS growth).

oneDNN, under CTranslate2, builds a convolution primitive for each new input shape of the
Whisper encoder and keeps it in a cache of up to 1,024 (~1.5 MB each). When the short window
followed the utterance's exact length, every utterance longer than the minimum window was a new
shape, and a soak grew by ~70 MB per 10 minutes (heaptrack attributed 63 of the 64 MB still
held after 13 minutes to these primitives). The window is now a whole number of seconds, so the
shapes, and the cache, are bounded. The model runs in a fresh interpreter, so what other tests
loaded or freed does not move its resident size.
"""

from __future__ import annotations

import pytest

from .fresh_rss import two_rss_figures

pytestmark = [pytest.mark.models, pytest.mark.slow]

MAX_GROWTH_MB = 5.0
"""Measured with this script: +84.5 MB before the fix (~2.8 MB per new length); +2.6 MB with the
grid (twice). Without the first pass, 80 utterances of random lengths grow a fresh process by
+38.9 MB, all of it within the first ~30."""

_SCRIPT = """
import numpy as np
from edgevox.engines.audio_wav import read_wav
from edgevox.engines.stt_faster_whisper import FasterWhisperSTT

audio, _ = read_wav(SPEECH)
speech = np.tile(audio.astype(np.float32) / (32768.0 if audio.dtype.kind == "i" else 1.0), 2)
stt = FasterWhisperSTT()
# Every encoder window from 11 s to 24 s at least once, at lengths 0.5 s apart ...
for half_seconds in range(15, 43):
    stt.transcribe(speech[: half_seconds * 8000])
warm = rss_mb()
# ... then 30 lengths none of which was said before.
rng = np.random.default_rng(7)
for seconds in rng.uniform(7.5, 21.0, size=30):
    stt.transcribe(speech[: int(seconds * 16000)])
print(warm, rss_mb())
"""


def test_utterances_of_new_lengths_do_not_grow_the_process(speech_dir):
    clip = speech_dir / "classic" / "jfk.wav"  # 11 s, tiled to 22 s
    warm, end = two_rss_figures(f"SPEECH = {str(clip)!r}\n" + _SCRIPT, timeout_s=600)
    assert end - warm < MAX_GROWTH_MB, (
        f"the STT engine grew {end - warm:.1f} MB over 30 utterances of new lengths "
        f"after every window was seen ({warm:.0f} -> {end:.0f} MB)"
    )
