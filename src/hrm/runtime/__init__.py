"""hrm.runtime."""
