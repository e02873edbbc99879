"""hrm.storage."""
