"""One turn of hrm as an ordered tuple of named steps over a typed context (ARCHITECTURE §3).

`hrm.turn.loop.STEPS` is the order; `hrm.turn.runner.TurnRunner` runs it and records the turn;
`hrm.turn.records` holds the typed decision record every step writes its part of.
"""

from hrm.turn.records import DecisionRecord, TurnResult

__all__ = ["DecisionRecord", "TurnResult"]
