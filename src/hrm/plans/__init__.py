"""hrm.plans."""
