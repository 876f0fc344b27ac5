"""Typed, validated application config (``edgevox run CONFIG``).

:func:`load_config` reads a YAML file (or a builtin name such as ``default``) into an
:class:`AppConfig`; :mod:`edgevox.app` builds the running application from it.
"""

from edgevox.config.loader import builtin_config_dir, builtin_configs, load_config, parse_config, resolve_config_path
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
