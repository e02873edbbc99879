"""hrm.learning."""
