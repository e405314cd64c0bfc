"""Shared test set-up: offscreen Qt before anything imports it, and the corpus beside us."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpus"
PERF = SHARED / "perf"


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    """`../shared/corpus`; tests that need it skip cleanly in a fresh clone without it."""
    if not (CORPUS / "CASES.tsv").is_file():
        pytest.skip(f"no test corpus at {CORPUS} (it lives beside the project, not in it)")
    return CORPUS
