"""hrm.continuity."""
