"""The LLM engine's memory stays flat over many requests (issue 25: the soak's steady RSS growth).

llama-cpp-python builds a new llama.cpp sampler chain for every request and frees the old one
only when Python's cycle collector finds it (its ``LlamaSampler`` closes over itself), which a
long-running process rarely does for old objects: RSS rose linearly, ~37 KB per request. The
engine frees each request's chain when the request ends. The model runs in a fresh interpreter,
so what other tests loaded or freed does not move its resident size.
"""

from __future__ import annotations

import pytest

from .fresh_rss import two_rss_figures

pytestmark = [pytest.mark.models, pytest.mark.slow]

WARMUP = 30
REQUESTS = 150
MAX_GROWTH_MB = 2.0
"""Measured with these requests (40 tokens each): +8.8 MB over 240 requests after warm-up
before the fix, linear; +0.3 MB after it (211.3 -> 211.6 MB)."""

_SCRIPT = f"""
import random
from edgevox.engines.llm_llama_cpp import LlamaCppLLM

words = "the robot goes to the kitchen and brings a cup of water then turns left slowly".split()
rng = random.Random(0)
llm = LlamaCppLLM()
for i in range({WARMUP} + {REQUESTS}):
    if i == {WARMUP}:
        warm = rss_mb()
    messages = [{{"role": "system", "content": "You are a robot."}},
                {{"role": "user", "content": " ".join(rng.choice(words) for _ in range(rng.randint(2, 15)))}}]
    llm.complete(messages, max_tokens=12)
    assert llm._llama._sampler is None, "the request's sampler chain was not freed"
print(warm, rss_mb())
"""


def test_many_requests_do_not_grow_the_process():
    warm, end = two_rss_figures(_SCRIPT, timeout_s=600)
    assert end - warm < MAX_GROWTH_MB, (
        f"the LLM engine grew {end - warm:.1f} MB over {REQUESTS} requests after warm-up ({warm:.0f} -> {end:.0f} MB)"
    )
