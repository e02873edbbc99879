"""hrm.focus."""
