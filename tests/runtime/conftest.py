"""Runtime test fixtures (defined in runtime_support)."""

from __future__ import annotations

from runtime_support import gate, models

__all__ = ["gate", "models"]
