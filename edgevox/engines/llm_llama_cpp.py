"""LLM adapter over llama-cpp-python (GGUF models on the CPU, or a GPU with a GPU build).

Streaming: :meth:`LlamaCppLLM.stream` runs ``create_chat_completion(stream=True)``
with the chat template stored in the GGUF file and yields text pieces as they are
sampled (usually one token each).

Prompt cache: llama-cpp-python compares a new prompt's tokens with the tokens
already in the KV cache and only evaluates the differing suffix. Every turn starts
with the same system prompt, so after :meth:`warmup` (or the first turn) the system
prompt costs nothing again as long as one conversation uses the engine; measured
with SmolLM2-135M on 2 cores: a ~150-token system prompt costs ~0.3 s cold and a few
ms cached. Several agents with *different* system prompts sharing one engine evict
each other's prefix; ``ram_cache_bytes > 0`` adds llama.cpp's ``LlamaRAMCache``,
which saves whole KV states keyed by prompt prefix (costs memory and a state copy
after each call, so it is off by default). The rejected alternative was keeping
the system prompt in a separate sequence: llama-cpp-python's high-level API has one.

Grammar: a GBNF string is compiled once into a ``LlamaGrammar`` and cached by text.

Cancellation: checked between tokens; on cancel the iterator ends (the underlying
generator is closed, so the KV cache keeps the tokens evaluated so far for the next
prefix match).

Threads and device: ``n_threads`` decodes (one token per step), ``n_threads_batch``
evaluates the prompt; both ``"auto"`` by default, which is one fewer than the usable
cores (at least 1; decode stops at half the cores from 8 up), rules in
:mod:`edgevox.engines.device`. The pip wheel of llama.cpp is built with OpenMP, whose
workers spin at every barrier: a thread that loses its core stalls the others for a
time slice, so a thread count equal to the core count is fast only on an idle machine.
Measured on 2 cores, SmolLM2-135M, median of 3 rounds x 3 turns, one script run (an
engine per row loaded side by side, rows interleaved round by round; other sessions'
work used ~1.5 cores throughout, so "shared" is contended; "+1 busy" adds one busy-loop
process)::

    decode/batch  shared: first token  tok/s  300-token prefill | +1 busy: first  tok/s  prefill
    1/1                     168 ms     31.2     4.0 s           |          129 ms  47.1   4.2 s
    1/2                    3086 ms     29.6     7.4 s           |         5785 ms  22.2  10.9 s
    2/1                     160 ms     16.0     2.8 s           |          249 ms  12.1   3.5 s
    2/2                     219 ms     19.7     6.0 s           |         2061 ms   1.9  11.1 s

A second run (1/1, 1/2, 2/2) agreed: 1/2 took 2.6 s to the first token and 12.5 s for
the prefill against 0.2 s and 3.8 s for 1/1; 2/2 decoded 3 tok/s against 27. On an idle
2-core machine 2/2 is faster (58 against 45 tok/s, first token 85 against 94 ms), which
is the gain auto gives up to stay fast when the STT, TTS or a ROS node takes a core.
``n_gpu_layers`` (``"auto"``: all layers when the build can offload, else 0; a count on
a CPU-only build is a :class:`ModelError`), and :attr:`LlamaCppLLM.device` and
:meth:`LlamaCppLLM.describe` say where it runs (logged at INFO when the model loads).

Threading: one inference at a time. :meth:`stream` takes the engine's lock when
iteration starts and releases it when the iterator ends or is closed, so callers
must exhaust or ``close()`` the iterator (``for`` loops and ``contextlib.closing``
do). :meth:`complete`, :meth:`count_tokens` and :meth:`warmup` take the same lock.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from edgevox.engines import device
from edgevox.engines._util import require
from edgevox.errors import EngineError, ModelError

if TYPE_CHECKING:
    from edgevox.runtime.context import CancelToken


_log = logging.getLogger(__name__)

# Defaults of LlamaCppLLM, which the config schema (``llm:``) takes as its own.
DEFAULT_MODEL: Final = "smollm2-135m"
DEFAULT_CONTEXT_TOKENS: Final = 2048

_ALWAYS_FITS_CTX = 4096
"""Context windows up to this size are accepted without reading the model's metadata."""


def _check_context(llama_cpp: Any, path: Path, n_ctx: int) -> None:
    """Refuse a context window larger than the model was trained for (reads only the
    vocabulary and metadata, ~0.2 s), before llama.cpp tries to allocate its cache."""
    try:
        meta = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False).metadata
    except Exception as exc:  # noqa: BLE001 - llama.cpp raises ValueError/RuntimeError on bad files
        raise ModelError(f"cannot load GGUF model {path}: {exc}") from exc
    trained = next((int(v) for k, v in meta.items() if k.endswith(".context_length") and str(v).isdigit()), 0)
    if trained and n_ctx > trained:
        raise ModelError(
            f"llm.context_tokens = {n_ctx} is more than {path.name} was trained for ({trained} tokens): "
            f"set llm.context_tokens to at most {trained}"
        )


def select_device(
    llama_cpp: Any, gpu_layers: int | str, threads: int | str, batch_threads: int | str
) -> tuple[str | None, int, int, int]:
    """``(gpu backend or None, n_gpu_layers, n_threads, n_threads_batch)`` with ``"auto"`` resolved
    (rules in :mod:`edgevox.engines.device`). Raises :class:`ModelError` when GPU layers are
    asked of a llama.cpp built without GPU support."""
    backend = device.llama_gpu_backend(llama_cpp)
    layers = device.llm_gpu_layers(gpu_layers, offload_supported=backend is not None)
    decode, batch = device.llm_threads(threads, batch_threads)
    return (backend if layers else None), layers, decode, batch


def _device_name(backend: str | None, layers: int, llama: Any) -> str:
    if not backend or not layers:
        return "cpu"
    meta = getattr(llama, "metadata", None) or {}
    total = next((int(v) for k, v in meta.items() if k.endswith(".block_count") and str(v).isdigit()), 0)
    if layers < 0 or (total and layers > total):
        return f"{backend} (all {total} layers)" if total else f"{backend} (all layers)"
    return f"{backend} ({layers} of {total} layers)" if total else f"{backend} ({layers} layers)"


class LlamaCppLLM:
    """A chat LLM from a GGUF file. ``model``: a model reference (see :func:`edgevox.models.resolve`)."""

    def __init__(
        self,
        model: str | Path = DEFAULT_MODEL,
        *,
        n_ctx: int = DEFAULT_CONTEXT_TOKENS,
        n_threads: int | str = "auto",
        n_threads_batch: int | str = "auto",
        n_gpu_layers: int | str = "auto",
        seed: int = 0,
        ram_cache_bytes: int = 0,
        max_grammar_cache: int = 32,
    ) -> None:
        llama_cpp = require("llama_cpp", package="llama-cpp-python", extra="llm", purpose="the LLM engine")
        from edgevox.models import resolve

        backend, n_gpu_layers, n_threads, n_threads_batch = select_device(
            llama_cpp, n_gpu_layers, n_threads, n_threads_batch
        )
        self.model_path = resolve(model)
        if n_ctx > _ALWAYS_FITS_CTX:
            _check_context(llama_cpp, self.model_path, n_ctx)
        self._llama_cpp = llama_cpp
        self._lock = threading.RLock()
        self._grammars: dict[str, Any] = {}
        self._max_grammar_cache = max_grammar_cache
        self.last_stats: dict[str, float] = {}
        """Stats of the last finished call: ``completion_tokens``,
        ``first_token_s`` (call -> first piece), ``total_s``, ``cancelled`` (0/1)."""
        try:
            self._llama = llama_cpp.Llama(
                model_path=str(self.model_path),
                n_ctx=n_ctx,
                n_threads=n_threads,
                n_threads_batch=n_threads_batch,
                n_gpu_layers=n_gpu_layers,
                seed=seed,
                verbose=False,
            )
        except Exception as exc:  # noqa: BLE001 - llama.cpp raises ValueError/RuntimeError on bad files
            raise ModelError(f"cannot load GGUF model {self.model_path}: {exc}") from exc
        if ram_cache_bytes > 0:
            self._llama.set_cache(llama_cpp.LlamaRAMCache(capacity_bytes=ram_cache_bytes))
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.n_threads_batch = n_threads_batch
        self.device = _device_name(backend, n_gpu_layers, self._llama)
        """Where the model runs: ``"cpu"``, or e.g. ``"cuda (all 30 layers)"``, ``"cuda (12 of 30 layers)"``."""
        _log.info("LLM %s: %s", self.model_path.name, self.describe())

    def describe(self) -> str:
        """Device and threads in a few words, e.g. ``cpu, 1 decode / 2 batch threads``."""
        return f"{self.device}, {self.n_threads} decode / {self.n_threads_batch} batch threads"

    # --- protocol -----------------------------------------------------------------------------

    def stream(
        self,
        messages: Sequence[dict[str, Any]],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        stop: Sequence[str] = (),
        grammar: str | None = None,
        cancel: CancelToken | None = None,
    ) -> Iterator[str]:
        """Yield text pieces as they are generated; ends early (no error) when ``cancel`` fires."""
        compiled = self._grammar(grammar) if grammar else None
        msgs = [dict(m) for m in messages]
        return self._generate(msgs, max_tokens, temperature, list(stop), compiled, cancel)

    def _generate(
        self,
        messages: list[dict[str, Any]],
        max_tokens: int,
        temperature: float,
        stop: list[str],
        grammar: Any,
        cancel: CancelToken | None,
    ) -> Iterator[str]:
        if cancel is not None and cancel.cancelled:
            return
        with self._lock:
            start = time.perf_counter()
            stats = {"completion_tokens": 0.0, "first_token_s": -1.0, "cancelled": 0.0}
            try:
                chunks = self._llama.create_chat_completion(
                    messages=messages,
                    max_tokens=max_tokens,
                    temperature=temperature,
                    stop=stop or None,
                    grammar=grammar,
                    stream=True,
                )
            except ValueError as exc:  # e.g. prompt longer than the context window
                raise EngineError(f"llama.cpp rejected the request: {exc}") from exc
            try:
                for chunk in chunks:
                    if cancel is not None and cancel.cancelled:
                        stats["cancelled"] = 1.0
                        break
                    delta = chunk["choices"][0].get("delta", {})
                    piece = delta.get("content")
                    if not piece:
                        continue
                    if stats["first_token_s"] < 0:
                        stats["first_token_s"] = time.perf_counter() - start
                    stats["completion_tokens"] += 1
                    yield piece
                    # Checked again right after the consumer resumes us, so a cancel
                    # that arrived while it handled the piece stops before the next
                    # (costly) decode step.
                    if cancel is not None and cancel.cancelled:
                        stats["cancelled"] = 1.0
                        break
            finally:
                close = getattr(chunks, "close", None)
                if close is not None:
                    close()
                self._free_sampler()
                stats["total_s"] = time.perf_counter() - start
                self.last_stats = stats

    def complete(
        self,
        messages: Sequence[dict[str, Any]],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        stop: Sequence[str] = (),
        grammar: str | None = None,
        cancel: CancelToken | None = None,
    ) -> str:
        """The whole reply as one string (same lock and cancellation as :meth:`stream`)."""
        return "".join(
            self.stream(
                messages, max_tokens=max_tokens, temperature=temperature, stop=stop, grammar=grammar, cancel=cancel
            )
        )

    def count_tokens(self, text: str) -> int:
        with self._lock:
            return len(self._llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    # --- extras -------------------------------------------------------------------------------

    def warmup(self, system_prompt: str = "") -> float:
        """Evaluate ``system_prompt`` into the KV cache (so the first turn is fast); returns seconds."""
        start = time.perf_counter()
        messages: list[dict[str, Any]] = []
        if system_prompt:
            messages.append({"role": "system", "content": system_prompt})
        messages.append({"role": "user", "content": "hi"})
        for _ in self.stream(messages, max_tokens=1):
            pass
        return time.perf_counter() - start

    def _grammar(self, text: str) -> Any:
        with self._lock:
            compiled = self._grammars.get(text)
            if compiled is None:
                self._check_grammar(text)
                compiled = self._llama_cpp.LlamaGrammar.from_string(text, verbose=False)
                if len(self._grammars) >= self._max_grammar_cache:
                    self._grammars.pop(next(iter(self._grammars)))
                self._grammars[text] = compiled
            return compiled

    def _check_grammar(self, text: str) -> None:
        """Parse ``text`` now: ``LlamaGrammar.from_string`` only stores it, and llama.cpp would
        otherwise meet a broken grammar mid-request (a NULL sampler). The parser's details
        go to llama.cpp's log on stderr."""
        lc = self._llama_cpp
        init = getattr(lc, "llama_sampler_init_grammar", None)
        if init is None:  # an older binding without the sampler API: cannot pre-check
            return
        sampler = init(self._llama._model.vocab, text.encode("utf-8"), b"root")
        if not sampler:
            raise EngineError(
                f"invalid GBNF grammar (llama.cpp could not parse it, or it has no 'root' rule); "
                f"grammar starts: {text[:80]!r}"
            )
        lc.llama_sampler_free(sampler)

    def _free_sampler(self) -> None:
        """Free the request's llama.cpp sampler chain now. llama-cpp-python makes a new chain
        per request and frees the old one only when Python's cycle collector finds it (its
        ``LlamaSampler`` closes over itself), which a long-running process rarely does for old
        objects: measured with the embedded SmolLM2, RSS rose 8.8 MB over 240 requests after
        warm-up (linear, never collected) and stays flat when each chain is freed here.
        ``Llama.sample`` makes a chain of its own when none is set, so clearing it is safe."""
        sampler = getattr(self._llama, "_sampler", None)
        if sampler is None:
            return
        close = getattr(sampler, "close", None)
        if close is not None:
            close()
        self._llama._sampler = None

    def close(self) -> None:
        """Free the model's memory now rather than at garbage collection."""
        with self._lock:
            close = getattr(self._llama, "close", None)
            if close is not None:
                close()
