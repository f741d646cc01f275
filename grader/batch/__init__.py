"""Batch grading: many candidates, many exercises, one output folder a panel can trust."""
