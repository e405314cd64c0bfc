"""Shared test set-up: offscreen Qt before anything imports it, strict mode, and the corpus beside us.

The corpus and the performance cases live in `../shared` beside the project (another folder
with `CRASH_INSPECTOR_SHARED`). A fresh clone has none: the tests that need them skip, saying
so. Where `../shared` is there, `.ci/run` sets `CRASH_INSPECTOR_REQUIRE_CORPUS=1`, and then a
missing corpus fails those tests instead.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Strict mode: a parser's own Python exception fails the test instead of becoming a "bad data"
# problem (inherited by the command-line subprocesses the tests start).
os.environ.setdefault("CRASH_INSPECTOR_STRICT", "1")

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("CRASH_INSPECTOR_SHARED") or REPO.parent / "shared")
#: Set by `.ci/run`: the shared data must be there, so its absence is a failure, not a skip.
REQUIRE_CORPUS = os.environ.get("CRASH_INSPECTOR_REQUIRE_CORPUS", "") not in ("", "0")
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


def missing_shared_data(what: str, where: Path) -> None:
    """A test needs data from `../shared` that is not there: skip (a fresh clone), or fail (CI)."""
    message = f"no {what} at {where} (it lives beside the project, not in it)"
    if REQUIRE_CORPUS:
        pytest.fail(f"{message}; CRASH_INSPECTOR_REQUIRE_CORPUS is set, so it must be there", pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    """`../shared/corpus`; tests that need it skip cleanly in a fresh clone without it."""
    if not (CORPUS / "CASES.tsv").is_file():
        missing_shared_data("test corpus", CORPUS)
    return CORPUS


@pytest.fixture(autouse=True)
def _automatic_cycle_collection_after_each_test() -> Iterator[None]:
    """A window turns Python's automatic cycle collection off (`inspector.gui.gc_policy`); the
    next test, which may be plain engine code with no event loop to collect for it, gets it back."""
    yield
    policy = sys.modules.get("inspector.gui.gc_policy")
    if policy is not None:
        policy.restore_automatic_collection()
