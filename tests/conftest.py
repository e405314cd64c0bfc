"""Shared test set-up: offscreen Qt before anything imports it, and the corpus beside us."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Strict mode: a parser's own Python exception fails the test instead of becoming a "bad data"
# problem (inherited by the command-line subprocesses the tests start).
os.environ.setdefault("CRASH_INSPECTOR_STRICT", "1")

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpus"
PERF = SHARED / "perf"

#: One CASES.tsv row: (label, dump, symbol paths, reference JSON), paths relative to CORPUS.
Case = tuple[str, str, tuple[str, ...], str]


def read_cases() -> list[Case]:
    """The rows of `CORPUS/CASES.tsv`; none without the corpus (its tests skip through `corpus_dir`)."""
    path = CORPUS / "CASES.tsv"
    if not path.is_file():
        return []
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        label, dump, symbols, reference = line.split("\t")
        rows.append((label, dump, tuple(symbols.split()), reference))
    return rows


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    """`../shared/corpus`; tests that need it skip cleanly in a fresh clone without it."""
    if not (CORPUS / "CASES.tsv").is_file():
        pytest.skip(f"no test corpus at {CORPUS} (it lives beside the project, not in it)")
    return CORPUS
