"""hrm.reasoning."""
