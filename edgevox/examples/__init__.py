"""Runnable examples (the simulated home robot)."""
