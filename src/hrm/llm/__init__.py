"""hrm.llm."""
