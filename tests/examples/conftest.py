"""The embedded model for example tests (shared session-scoped fixture of tests/agents)."""

from tests.agents.conftest import real_llm  # noqa: F401
