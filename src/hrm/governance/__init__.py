"""hrm.governance."""
