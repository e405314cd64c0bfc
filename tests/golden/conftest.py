"""Golden tests: our reports against the reference stackwalkers' outputs in ../shared/corpus.

They skip cleanly when the corpus is not beside the project. One symbol-index cache
directory is shared by the whole session, so each `.sym` file is indexed once.
"""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared" / "corpus"


def read_cases() -> list[tuple[str, str, tuple[str, ...], str]]:
    """CASES.tsv rows: (label, dump, symbol paths, reference JSON), paths relative to the corpus."""
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


Case = tuple[str, str, tuple[str, ...], str]


def case_params(cases: list[Case]) -> list[object]:
    """Parameters for a per-case test; without the corpus, one skipped parameter saying why."""
    if cases:
        return [pytest.param(c, id=c[0]) for c in cases]
    reason = f"no test corpus at {CORPUS} (it lives beside the project, not in it)"
    return [pytest.param(None, id="no-corpus", marks=pytest.mark.skip(reason=reason))]


@pytest.fixture(scope="session")
def corpus() -> Path:
    if not (CORPUS / "CASES.tsv").is_file():
        pytest.skip(f"no test corpus at {CORPUS} (it lives beside the project, not in it)")
    return CORPUS


@pytest.fixture(scope="session")
def symbols_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("symbol-index-cache")
