"""Small helpers shared by the engine adapters (no heavy imports here)."""

from __future__ import annotations

import importlib
from types import ModuleType

import numpy as np

from edgevox.errors import MissingDependencyError


def require(module: str, *, package: str, extra: str | None, purpose: str) -> ModuleType:
    """Import ``module`` or raise :class:`MissingDependencyError` naming the pip command."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        # Only a missing top-level module means "not installed"; a broken install
        # (e.g. a missing shared library) must surface as itself.
        if isinstance(exc, ModuleNotFoundError) and exc.name and exc.name.split(".")[0] == module.split(".")[0]:
            raise MissingDependencyError(package, extra, purpose) from exc
        raise


def as_mono_float32(audio: np.ndarray) -> np.ndarray:
    """float32 mono view/copy of ``audio``; int16 input is scaled to [-1, 1]."""
    a = np.asarray(audio)
    if a.dtype == np.int16:
        a = a.astype(np.float32) / 32768.0
    elif a.dtype != np.float32:
        a = a.astype(np.float32)
    if a.ndim == 2:
        a = a.mean(axis=1) if a.shape[1] > 1 else a[:, 0]
    return a.reshape(-1)


def float_to_pcm16(audio: np.ndarray) -> np.ndarray:
    return (np.clip(audio, -1.0, 1.0) * 32767.0).astype("<i2")
