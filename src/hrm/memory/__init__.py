"""hrm.memory."""
