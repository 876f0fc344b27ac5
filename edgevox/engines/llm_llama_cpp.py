"""LLM adapter over llama-cpp-python (GGUF models on the CPU).

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

Threading: one inference at a time. :meth:`stream` takes the engine's lock when
iteration starts and releases it when the iterator ends or is closed, so callers
must exhaust or ``close()`` the iterator (``for`` loops and ``contextlib.closing``
do). :meth:`complete`, :meth:`count_tokens` and :meth:`warmup` take the same lock.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from edgevox.engines._util import require
from edgevox.errors import EngineError, ModelError

if TYPE_CHECKING:
    from edgevox.runtime.context import CancelToken


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


class LlamaCppLLM:
    """A chat LLM from a GGUF file. ``model``: a model reference (see :func:`edgevox.models.resolve`)."""

    def __init__(
        self,
        model: str | Path = "smollm2-135m",
        *,
        n_ctx: int = 2048,
        n_threads: int = 2,
        seed: int = 0,
        ram_cache_bytes: int = 0,
        max_grammar_cache: int = 32,
    ) -> None:
        llama_cpp = require("llama_cpp", package="llama-cpp-python", extra="llm", purpose="the LLM engine")
        from edgevox.models import resolve

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
                n_threads_batch=n_threads,
                seed=seed,
                verbose=False,
            )
        except Exception as exc:  # noqa: BLE001 - llama.cpp raises ValueError/RuntimeError on bad files
            raise ModelError(f"cannot load GGUF model {self.model_path}: {exc}") from exc
        if ram_cache_bytes > 0:
            self._llama.set_cache(llama_cpp.LlamaRAMCache(capacity_bytes=ram_cache_bytes))
        self.n_ctx = n_ctx

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

    def close(self) -> None:
        """Free the model's memory now rather than at garbage collection."""
        with self._lock:
            close = getattr(self._llama, "close", None)
            if close is not None:
                close()
