"""Idle-time precompute: the job runner (runner.py) and what each kind of job does (handlers.py)."""

from assistant.precompute.runner import (
    Precompute,
    PrecomputeBusy,
    PrecomputeProgressed,
    PrecomputeReport,
)

__all__ = ["Precompute", "PrecomputeBusy", "PrecomputeProgressed", "PrecomputeReport"]
