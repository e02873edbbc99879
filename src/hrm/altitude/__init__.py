"""hrm.altitude."""
