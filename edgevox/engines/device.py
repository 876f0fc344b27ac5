"""Which accelerator and how many CPU threads an engine uses: the rules in one place.

Every engine config takes ``"auto"`` or an explicit value for its threads and its device;
the functions here turn ``"auto"`` into a number or a device from what this process can
use, and refuse an explicit request the installed libraries cannot honour with one line
that says what to install or which key to change. They take what they inspect as
arguments (core count, "does llama.cpp offload", onnxruntime's provider list), so the
rules are tested without a GPU; :func:`llama_gpu_backend` and :func:`onnx_providers_available`
are the only functions that ask a library.

Thread rule (measured on 2 cores; figures in :mod:`edgevox.engines.llm_llama_cpp` and
:mod:`edgevox.engines.tts_piper`): the LLM decodes *and* prefills on one core fewer than
the process may use, so the audio, STT and TTS threads keep a core and llama.cpp's OpenMP
workers (which spin at every barrier) are not descheduled mid-step. With a core taken
by other work, 2 prefill threads on 2 cores made the first token 10-40x later than 1, and
2 decode threads halved tokens/s or worse; on an idle machine they win only ~10-25 %.
On 8 or more cores decode stops at half the cores (not measured here: llama.cpp decode is
memory-bound and gains little past the physical cores, which hyper-threaded CPUs report
as half). Cores are the process's affinity mask (``taskset``, cgroup cpusets), not the
machine's count. The rejected alternative, llama-cpp-python's own default (half the
logical CPUs decode, all of them prefill), ignores that mask and oversubscribes prefill.

GPU rule: ``"auto"`` uses the GPU when the installed build can (a CUDA/Metal/Vulkan
llama.cpp; onnxruntime-gpu's CUDA provider), all layers of the LLM, else the CPU.
How to install those builds: ``docs/engines.md``, section "GPU builds".
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Literal

from edgevox.errors import ArgumentError, ModelError

Auto = Literal["auto"]
GPU_DOCS = "docs/engines.md#gpu-builds"

_BACKENDS: tuple[tuple[str, str], ...] = (
    *(("CUDA", "cuda"), ("HIP", "rocm"), ("ROCm", "rocm"), ("Metal", "metal"), ("MTL", "metal")),
    *(("Vulkan", "vulkan"), ("SYCL", "sycl"), ("MUSA", "musa"), ("CANN", "cann"), ("OpenCL", "opencl")),
)


def usable_cores() -> int:
    """CPU cores this process may run on (its affinity mask, not the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS and Windows have no sched_getaffinity
        return max(1, os.cpu_count() or 1)


def _explicit(name: str, value: int | str) -> int | None:
    if value == "auto":
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ArgumentError(f"{name} = {value!r}: must be 'auto' or a whole number >= 1")
    return value


def llm_threads(decode: int | str = "auto", batch: int | str = "auto", *, cores: int | None = None) -> tuple[int, int]:
    """``(decode threads, prompt/batch threads)`` for llama.cpp.

    auto: decode = cores - 1 (at least 1) up to 7 cores, cores // 2 from 8;
    batch = cores - 1 (at least 1).
    """
    n = cores if cores is not None else usable_cores()
    d = _explicit("llm.threads", decode)
    b = _explicit("llm.batch_threads", batch)
    if d is None:
        d = max(1, n - 1) if n < 8 else n // 2
    if b is None:
        b = max(1, n - 1)
    return d, b


def onnx_threads(threads: int | str = "auto", *, cores: int | None = None, name: str = "tts.threads") -> int:
    """Intra-op threads for an onnxruntime session (Piper). auto: 2 when 2 or more cores, else 1.

    More than 2 buys little for one short sentence and takes cores from the LLM that is
    generating the next sentence at the same time."""
    n = cores if cores is not None else usable_cores()
    t = _explicit(name, threads)
    return t if t is not None else min(2, n)


def llm_gpu_layers(requested: int | str, *, offload_supported: bool) -> int:
    """Layers to offload: ``-1`` = all, ``0`` = CPU only. auto: all when the build can offload.

    Raises :class:`ModelError` when layers are asked for and the build cannot offload
    (llama.cpp would silently run on the CPU)."""
    if requested == "auto":
        return -1 if offload_supported else 0
    if isinstance(requested, bool) or not isinstance(requested, int) or requested < -1:
        raise ArgumentError(f"llm.gpu_layers = {requested!r}: must be 'auto', -1 (all), 0 (CPU) or a layer count")
    if requested != 0 and not offload_supported:
        raise ModelError(
            f"llm.gpu_layers = {requested}, but the installed llama-cpp-python was built without GPU support: "
            f"install a CUDA or Metal build (see {GPU_DOCS}) or set llm.gpu_layers: 0"
        )
    return requested


def llama_gpu_backend(llama_cpp: Any) -> str | None:
    """The GPU backend the installed llama.cpp was built with (``"cuda"``, ``"metal"`` ...), or None."""
    supports = getattr(llama_cpp, "llama_supports_gpu_offload", None)
    if supports is None or not supports():
        return None
    info = getattr(llama_cpp, "llama_print_system_info", lambda: b"")()
    text = info.decode("utf-8", "replace") if isinstance(info, bytes) else str(info)
    for marker, name in _BACKENDS:
        if marker in text:
            return name
    return "gpu"


def onnx_providers_available(ort: Any) -> list[str]:
    return list(ort.get_available_providers())


def onnx_providers(device: str, available: Sequence[str], *, name: str = "tts.device") -> tuple[str, list[Any]]:
    """``(device, providers for InferenceSession)``: ``device`` is ``"cuda"`` or ``"cpu"``.

    auto: CUDA when onnxruntime lists ``CUDAExecutionProvider`` (the onnxruntime-gpu
    package), else the CPU. The CPU provider always follows CUDA, for operators CUDA lacks."""
    if device not in ("auto", "cpu", "cuda"):
        raise ArgumentError(f"{name} = {device!r}: must be 'auto', 'cpu' or 'cuda'")
    has_cuda = "CUDAExecutionProvider" in available
    if device == "cuda" and not has_cuda:
        raise ModelError(
            f"{name} = 'cuda', but onnxruntime has no CUDA provider (it offers {', '.join(available) or 'none'}): "
            f"pip install onnxruntime-gpu in place of onnxruntime (see {GPU_DOCS}) or set {name}: cpu"
        )
    if device == "cpu" or not has_cuda:
        return "cpu", ["CPUExecutionProvider"]
    # Piper's own choice for CUDA: heuristic conv algorithm search (the exhaustive one costs seconds).
    return "cuda", [("CUDAExecutionProvider", {"cudnn_conv_algo_search": "HEURISTIC"}), "CPUExecutionProvider"]


__all__ = [
    "GPU_DOCS",
    "Auto",
    "llama_gpu_backend",
    "llm_gpu_layers",
    "llm_threads",
    "onnx_providers",
    "onnx_providers_available",
    "onnx_threads",
    "usable_cores",
]
