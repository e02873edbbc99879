"""hrm — a governed cognitive runtime for LLM assistants.

The public API is re-exported here lazily: `import hrm` costs almost nothing, so the Claude Code
hook (which imports `hrm.continuity…`) starts fast, while `from hrm import HRM` still works.
"""

from __future__ import annotations

from hrm._lazy import lazy_exports

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: importing typing costs the hook ~5 ms
if TYPE_CHECKING:
    from hrm._version import __version__
    from hrm.config import HRMConfig, LLMConfig, PolicySurface, load_config
    from hrm.errors import ErrorCode, HRMError, recover_from_error
    from hrm.home import HRMHome, initialize
    from hrm.pipeline import HRM
    from hrm.turn.records import DecisionRecord, TurnResult
    from hrm.types import (
        AltitudeLevel,
        BlastRadius,
        Complexity,
        ConflictLevel,
        GateType,
        HRMContext,
        ReducerType,
        Stakes,
        Stance,
        TurnInput,
    )

__all__ = [
    "HRM",
    "AltitudeLevel",
    "BlastRadius",
    "Complexity",
    "ConflictLevel",
    "DecisionRecord",
    "ErrorCode",
    "GateType",
    "HRMConfig",
    "HRMContext",
    "HRMError",
    "HRMHome",
    "LLMConfig",
    "PolicySurface",
    "ReducerType",
    "Stakes",
    "Stance",
    "TurnInput",
    "TurnResult",
    "__version__",
    "initialize",
    "load_config",
    "recover_from_error",
]

_LAZY = {
    "__version__": "hrm._version",
    "HRM": "hrm.pipeline",
    "DecisionRecord": "hrm.turn.records",
    "TurnResult": "hrm.turn.records",
    "HRMConfig": "hrm.config",
    "LLMConfig": "hrm.config",
    "PolicySurface": "hrm.config",
    "load_config": "hrm.config",
    "ErrorCode": "hrm.errors",
    "HRMError": "hrm.errors",
    "recover_from_error": "hrm.errors",
    "HRMHome": "hrm.home",
    "initialize": "hrm.home",
    "AltitudeLevel": "hrm.types",
    "BlastRadius": "hrm.types",
    "Complexity": "hrm.types",
    "ConflictLevel": "hrm.types",
    "GateType": "hrm.types",
    "HRMContext": "hrm.types",
    "ReducerType": "hrm.types",
    "Stakes": "hrm.types",
    "Stance": "hrm.types",
    "TurnInput": "hrm.types",
}

__getattr__, __dir__ = lazy_exports(globals(), _LAZY)
