"""Evaluation sets and their scoring (memory recall now; tool-calling suites in issue 6)."""
