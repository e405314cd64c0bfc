"""Acceptance: each dump's signature is the one Socorro's siggen gives on the reference stackwalker's JSON.

On the public corpus (`../shared/corpus`, skipped without it) the reference JSON is
minidump-stackwalk 0.25.0's `*.rust-minidump.json`. On our own crashes it is in
`tests/fixtures/crashes/reference-signatures.tsv` (siggen on minidump-stackwalk 0.25.0's
`--json` of each dump, with the symbol paths of the fixtures' README); when the reference
stackwalker is installed (`../shared/tools/install-peers bench/data/peers`) that file is
checked against a fresh run of it too.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from inspector.core.triage import TriageOptions, signature_of, triage_dump
from tests.conftest import CORPUS, Case, read_cases
from tests.dropin.common import WITH_THE_FILE_ACCEPTED, expected_case
from tests.golden.conftest import case_params
from tests.triage.conftest import OWN_CRASHES, REPO

REFERENCE_SIGNATURES = REPO / "tests" / "fixtures" / "crashes" / "reference-signatures.tsv"
REFERENCE_STACKWALK = REPO / "bench" / "data" / "peers" / "minidump-stackwalk"


@pytest.mark.golden
@pytest.mark.parametrize("case", case_params(read_cases()))
def test_corpus_signature_is_siggens_on_the_reference_json(case: Case, index_cache: str) -> None:
    """KNOWN_DIFFERENCES.md §1: for the two cases whose .sym file rust-minidump refuses and we read,
    ours is the reference's signature with the file accepted (and differs from the refusing run's)."""
    label, dump, symbols, reference = case
    options = TriageOptions(symbol_paths=tuple(str(CORPUS / s) for s in symbols), index_cache=index_cache)
    ours = triage_dump(CORPUS / dump, options)
    assert ours.readable, ours.problems
    expected = expected_case(case)[3]
    assert ours.signature == signature_of(json.loads((CORPUS / expected).read_text(encoding="utf-8")))
    if label in WITH_THE_FILE_ACCEPTED:  # else §1 no longer applies: update it
        assert ours.signature != signature_of(json.loads((CORPUS / reference).read_text(encoding="utf-8")))


def _read_reference_signatures() -> dict[str, str]:
    rows = {}
    for line in REFERENCE_SIGNATURES.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            name, signature = line.split("\t")
            rows[name] = signature
    return rows


def test_reference_signatures_cover_every_own_crash() -> None:
    assert sorted(_read_reference_signatures()) == sorted(OWN_CRASHES)


@pytest.mark.parametrize("name", sorted(OWN_CRASHES))
def test_own_crash_signature_is_siggens_on_the_reference_json(name: str, index_cache: str) -> None:
    dump, symbols = OWN_CRASHES[name]
    options = TriageOptions(symbol_paths=tuple(map(str, symbols)), index_cache=index_cache)
    assert triage_dump(dump, options).signature == _read_reference_signatures()[name]


@pytest.mark.parametrize("name", sorted(OWN_CRASHES))
def test_reference_signatures_file_matches_the_reference_stackwalker(name: str) -> None:
    if not REFERENCE_STACKWALK.is_file():
        pytest.skip(f"no reference stackwalker at {REFERENCE_STACKWALK} (../shared/tools/install-peers)")
    dump, symbols = OWN_CRASHES[name]
    out = subprocess.run(
        [str(REFERENCE_STACKWALK), "--json", str(dump), *map(str, symbols)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    assert signature_of(json.loads(out)) == _read_reference_signatures()[name]


def test_signature_of_a_dump_with_symbols_names_the_crashing_function(index_cache: str) -> None:
    dump, symbols = OWN_CRASHES["lib_callback"]
    crash = triage_dump(dump, TriageOptions(symbol_paths=tuple(map(str, symbols)), index_cache=index_cache))
    assert crash.crash_reason.startswith("SIGSEGV")
    assert crash.top_frames[0].startswith("libinventory.so!discounted_unit_price")
    assert crash.modules_missing_symbols == ()  # every frame of the crashing thread is symbolized


def test_without_symbols_the_modules_are_named_missing(tmp_path: Path) -> None:
    dump, _ = OWN_CRASHES["lib_callback"]
    crash = triage_dump(dump, TriageOptions(index_cache=str(tmp_path)))
    assert crash.signature == "libinventory.so"  # siggen: the module when no function is known
    assert crash.modules_missing_symbols[0] == "libinventory.so"  # frame 0's module first
    assert "restock_report" in crash.modules_missing_symbols


WINDOWS = REPO / "tests" / "fixtures" / "windows-crashes"


@pytest.mark.parametrize("reference", sorted(WINDOWS.glob("O*/*.reference.json")), ids=lambda p: p.stem)
def test_windows_crash_signature_is_siggens_on_the_reference_json(reference: Path, index_cache: str) -> None:
    """Our Windows crashes (modules without debug ids) with the reference's JSON committed beside them."""
    dump = reference.with_name(reference.name.replace(".reference.json", ".dmp"))
    options = TriageOptions(symbol_paths=(str(WINDOWS / "symbols"),), index_cache=index_cache)
    expected = signature_of(json.loads(reference.read_text(encoding="utf-8")))
    assert triage_dump(dump, options).signature == expected
