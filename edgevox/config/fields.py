"""The base model and the bounded value types every config section is built from.

Every number a config holds is finite and within a range a robot can use: ``.inf``, ``nan``,
``${T:-1e999}`` or ``max_tokens: 10000000`` are errors naming the key and the accepted range,
not values that surface later as a traceback in the middle of a shutdown. The ranges are
wide (they reject nonsense, not unusual choices).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, StrictStr


class Section(BaseModel):
    """Base of every config model: unknown keys are errors, numbers are finite, values are
    validated on assignment too."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, allow_inf_nan=False)


Name = Annotated[StrictStr, Field(min_length=1, pattern=r"^[A-Za-z_][A-Za-z0-9_\-]*$")]
"""An agent/workflow/background-agent name: letters, digits, ``_`` and ``-``."""

HOUR_S = 3600
DAY_S = 86400

PosFloat = Annotated[StrictFloat, Field(gt=0, le=1e6)]
"""A positive ratio or factor (finite; at most a million)."""
NonNegFloat = Annotated[StrictFloat, Field(ge=0, le=1e6)]
PosInt = Annotated[StrictInt, Field(ge=1, le=1_000_000)]
NonNegInt = Annotated[StrictInt, Field(ge=0, le=1_000_000)]
Milliseconds = Annotated[StrictInt, Field(ge=0, le=60_000)]
"""A short interval in milliseconds, at most a minute."""
Seconds = Annotated[StrictFloat, Field(gt=0, le=DAY_S)]
"""A positive duration in seconds, at most a day."""
ShortSeconds = Annotated[StrictFloat, Field(gt=0, le=HOUR_S)]
"""A positive duration in seconds, at most an hour (a deadline a user waits on)."""
Threads = Annotated[StrictInt, Field(ge=1, le=256)]
"""CPU threads for an engine."""
Temperature = Annotated[StrictFloat, Field(ge=0, le=5)]
MAX_CONTEXT_TOKENS = 1 << 20
"""Largest context window a config may ask for (llama.cpp models reach 128 k to 1 M)."""
Tokens = Annotated[StrictInt, Field(ge=1, le=MAX_CONTEXT_TOKENS)]
