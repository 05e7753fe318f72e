"""Evaluations on public benchmarks: `ebbing eval locomo` (see docs/evaluation.md)."""
