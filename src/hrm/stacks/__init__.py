"""hrm.stacks."""
