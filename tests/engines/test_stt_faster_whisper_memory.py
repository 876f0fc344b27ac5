"""The STT engine's memory stays flat over utterances of every length (issue 25: the soak's
steady RSS growth).

oneDNN, under CTranslate2, builds a convolution primitive for each new input shape of the
Whisper encoder and keeps it in a cache of up to 1,024 (0.4-8 MB each). When the short window
followed the utterance's exact length, every utterance longer than the minimum window was a new
shape, and a soak grew by ~70 MB per 10 minutes (heaptrack attributed 63 of the 64 MB still
held after 13 minutes to these primitives). The window is now one of a few fixed lengths (the
ladder), each built by ``warmup``, so new lengths add nothing. The model runs in a fresh
interpreter, so what other tests loaded or freed does not move its resident size.
"""

from __future__ import annotations

import pytest

from .fresh_rss import two_rss_figures

pytestmark = [pytest.mark.models, pytest.mark.slow]

MAX_GROWTH_MB = 5.0
"""Growth allowed over the second 30 utterances. Measured with this script: +54.1 MB with a
window of the utterance's exact length (about 2 MB per new length, for as long as lengths are
new); +2.0 MB with windows rounded up to whole seconds (21 of them, most built by the first
30); +0.02 MB with the ladder and its warm-up (twice)."""

_SCRIPT = """
import numpy as np
from edgevox.engines.audio_wav import read_wav
from edgevox.engines.stt_faster_whisper import FasterWhisperSTT

audio, _ = read_wav(SPEECH)
speech = np.tile(audio.astype(np.float32) / (32768.0 if audio.dtype.kind == "i" else 1.0), 3)
stt = FasterWhisperSTT()
stt.warmup()
lengths = np.random.default_rng(7).uniform(0.5, 33.0, size=60)  # every window, the 30 s path too
for seconds in lengths[:30]:
    stt.transcribe(speech[: int(seconds * 16000)])
after_first = rss_mb()
for seconds in lengths[30:]:  # lengths none of which was said before
    stt.transcribe(speech[: int(seconds * 16000)])
print(after_first, rss_mb())
"""


def test_utterances_of_new_lengths_do_not_grow_the_process(speech_dir):
    clip = speech_dir / "classic" / "jfk.wav"  # 11 s, tiled to 33 s
    first, end = two_rss_figures(f"SPEECH = {str(clip)!r}\n" + _SCRIPT, timeout_s=600)
    assert end - first < MAX_GROWTH_MB, (
        f"the STT engine grew {end - first:.1f} MB over 30 utterances of new lengths ({first:.0f} -> {end:.0f} MB)"
    )
