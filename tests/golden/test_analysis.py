"""The crash analysis against rust-minidump 0.25's, field by field, on every corpus case that has one.

`crash_info.instruction`, `memory_accesses`, `adjusted_address`, `possible_bit_flips`,
`instruction_pointer_update` and `crash_inconsistencies` must equal the reference's JSON
exactly (key presence, hex width, the f32 confidences), and the human report's analysis
lines must be its lines. (test_fidelity.py compares the rest of each document.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.core.process import ProcessOptions, process
from inspector.core.report.human import render_human
from inspector.core.report.json_report import json_document
from tests.conftest import read_cases
from tests.golden.conftest import case_params

pytestmark = pytest.mark.golden

FIELDS = (
    "instruction",
    "memory_accesses",
    "adjusted_address",
    "possible_bit_flips",
    "instruction_pointer_update",
    "crash_inconsistencies",
)


def _with_analysis() -> list[tuple[str, str, tuple[str, ...], str]]:
    from tests.conftest import CORPUS

    out = []
    for case in read_cases():
        reference = json.loads((CORPUS / case[3]).read_text(encoding="utf-8"))
        info = reference.get("crash_info") or {}
        if any(info.get(name) not in (None, []) for name in FIELDS):
            out.append(case)
    return out


CASES = _with_analysis()


@pytest.mark.parametrize("case", case_params(CASES))
def test_analysis_fields_match_rust_minidump(
    corpus_dir: Path, symbols_cache: Path, case: tuple[str, str, tuple[str, ...], str]
) -> None:
    _label, dump, symbols, reference = case
    state = process(
        corpus_dir / dump,
        ProcessOptions(symbol_paths=tuple(corpus_dir / s for s in symbols), symbols_cache=symbols_cache),
    )
    ours = json.loads(json.dumps(json_document(state)))["crash_info"]
    ref = json.loads((corpus_dir / reference).read_text(encoding="utf-8"))["crash_info"]
    for name in FIELDS:
        assert ours[name] == ref[name], name
    human = (corpus_dir / reference.replace(".json", ".txt")).read_text(encoding="utf-8")
    ours_text = render_human(state, problems=False)
    start, end = human.index("Crash reason"), human.index("Process uptime")
    assert ours_text[ours_text.index("Crash reason") : ours_text.index("Process uptime")] == human[start:end]


def test_corpus_has_analysis_cases(corpus_dir: Path) -> None:
    assert len(CASES) >= 35  # the amd64 crashes rust-minidump analysed (87 fields)
