"""Builders for synthetic test inputs (minidumps, symbol files)."""
