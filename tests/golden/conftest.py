"""Golden tests: our reports against the reference stackwalkers' outputs in ../shared/corpus.

They skip cleanly when the corpus is not beside the project (the corpus, `corpus_dir` and
`read_cases` are in tests/conftest.py). One symbol-index cache directory is shared by the
whole session, so each `.sym` file is indexed once.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import CORPUS, REQUIRE_CORPUS, Case


def case_params(cases: list[Case]) -> list[object]:
    """Parameters for a per-case test; without the corpus, one skipped parameter saying why.

    When CI requires the corpus the parameter is not skipped: its test then fails in the
    `corpus_dir` fixture, saying what is missing.
    """
    if cases:
        return [pytest.param(c, id=c[0]) for c in cases]
    if REQUIRE_CORPUS:
        return [pytest.param(None, id="no-corpus")]
    reason = f"no test corpus at {CORPUS} (it lives beside the project, not in it)"
    return [pytest.param(None, id="no-corpus", marks=pytest.mark.skip(reason=reason))]


@pytest.fixture(scope="session")
def symbols_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("symbol-index-cache")
