"""Typed, validated application config (``edgevox run CONFIG``).

:func:`load_config` reads a YAML file (or a builtin name such as ``default``) into an
:class:`AppConfig`; :mod:`edgevox.app` builds the running application from it.

The names below are imported on first use, so that the section models of other packages
(orchestration, bridges) can build on :mod:`edgevox.config.fields` without an import cycle.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from edgevox.config.loader import (
        builtin_config_dir,
        builtin_configs,
        load_config,
        parse_config,
        resolve_config_path,
    )
    from edgevox.config.schema import (
        AgentConfig,
        AppConfig,
        AudioConfig,
        BackgroundAgentConfig,
        LLMConfig,
        STTConfig,
        TTSConfig,
        WorkflowConfig,
    )

_HOME = {
    "builtin_config_dir": "loader",
    "builtin_configs": "loader",
    "load_config": "loader",
    "parse_config": "loader",
    "resolve_config_path": "loader",
    "AgentConfig": "schema",
    "AppConfig": "schema",
    "AudioConfig": "schema",
    "BackgroundAgentConfig": "schema",
    "LLMConfig": "schema",
    "STTConfig": "schema",
    "TTSConfig": "schema",
    "WorkflowConfig": "schema",
}


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module 'edgevox.config' has no attribute {name!r}")
    return getattr(importlib.import_module(f"edgevox.config.{module}"), name)


__all__ = [
    "AgentConfig",
    "AppConfig",
    "AudioConfig",
    "BackgroundAgentConfig",
    "LLMConfig",
    "STTConfig",
    "TTSConfig",
    "WorkflowConfig",
    "builtin_config_dir",
    "builtin_configs",
    "load_config",
    "parse_config",
    "resolve_config_path",
]
