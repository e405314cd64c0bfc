"""Every corpus case against rust-minidump 0.25.0's JSON: the same frames, and the same report.

Every frame must equal the reference's exactly in each of FRAME_FIELDS: instruction
offset, module, function, inline functions, trust, offsets, file and line, `missing_symbols`
(stricter than `../shared/tools/compare-stackwalk`, which lets the instruction differ by one
byte). The rest of the document must be equal too, except the fields listed in
KNOWN_DIFFERENCES.md:

* `inspector_problems`, `crash_info.inspector_code_source` and each module's
  `inspector_matched_by` (our additions);
* frame 0 of `breakpad/linux_inline` and `.old-inline-syms`, whose symbol file rust-minidump
  refuses (no final newline / old INLINE syntax) while we read it and name the frame.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.core.process import ProcessOptions, process
from inspector.core.report.json_report import json_document
from tests.conftest import read_cases
from tests.golden.conftest import case_params

pytestmark = pytest.mark.golden

CASES = read_cases()

#: (case, thread index, frame index) -> frame fields allowed to differ, and why.
FRAME_DIFFERENCES: dict[tuple[str, int, int], tuple[frozenset[str], str]] = {
    (label, 0, 0): (
        frozenset({"function", "function_offset", "file", "line", "missing_symbols", "inlines"}),
        "rust-minidump 0.25 refuses this .sym file; we read it and name the frame",
    )
    for label in ("breakpad/linux_inline", "breakpad/linux_inline.old-inline-syms")
}
#: The frame fields held equal to the reference's (exactly: no one-byte slack on `offset`).
FRAME_FIELDS = (
    "frame",
    "offset",
    "module",
    "function",
    "inlines",
    "trust",
    "module_offset",
    "function_offset",
    "file",
    "line",
    "missing_symbols",
    "unloaded_modules",
)


def _ours(corpus: Path, dump: str, symbols: tuple[str, ...], cache: Path) -> dict[str, object]:
    options = ProcessOptions(symbol_paths=tuple(corpus / s for s in symbols), symbols_cache=cache)
    document = json_document(process(corpus / dump, options))
    # round-trip through JSON so types compare as the reference's do
    loaded: dict[str, object] = json.loads(json.dumps(document))
    return loaded


@pytest.mark.parametrize("case", case_params(CASES))
def test_case_matches_rust_minidump(
    corpus_dir: Path, symbols_cache: Path, case: tuple[str, str, tuple[str, ...], str]
) -> None:
    label, dump, symbols, reference = case
    ours = _ours(corpus_dir, dump, symbols, symbols_cache)
    ref = json.loads((corpus_dir / reference).read_text(encoding="utf-8"))

    ours_threads, ref_threads = ours.pop("threads"), ref.pop("threads")
    assert isinstance(ours_threads, list) and isinstance(ref_threads, list)
    assert len(ours_threads) == len(ref_threads)
    for t, (ot, rt) in enumerate(zip(ours_threads, ref_threads, strict=True)):
        of, rf = ot.pop("frames"), rt.pop("frames")
        assert ot == rt, f"thread {t}"
        assert len(of) == len(rf), f"thread {t}: {len(of)} frames, reference {len(rf)}"
        for n, (a, b) in enumerate(zip(of, rf, strict=True)):
            allowed, _ = FRAME_DIFFERENCES.get((label, t, n), (frozenset(), ""))
            for name in FRAME_FIELDS:
                if name not in allowed:
                    assert a.get(name) == b.get(name), f"thread {t} frame {n} {name}"

    ours_crashing, ref_crashing = ours.pop("crashing_thread", None), ref.pop("crashing_thread", None)
    assert (ours_crashing is None) == (ref_crashing is None)
    if isinstance(ours_crashing, dict) and isinstance(ref_crashing, dict):
        ours_frames, ref_frames = ours_crashing.pop("frames"), ref_crashing.pop("frames")
        assert ours_crashing == ref_crashing
        assert ours_frames[0]["registers"] == ref_frames[0]["registers"]

    ours_crash, ref_crash = ours.pop("crash_info"), ref.pop("crash_info")
    assert isinstance(ours_crash, dict) and isinstance(ref_crash, dict)
    for name in set(ours_crash) | set(ref_crash):
        if not name.startswith("inspector_"):
            assert ours_crash.get(name) == ref_crash.get(name), f"crash_info.{name}"

    problems = ours.pop("inspector_problems")
    assert isinstance(problems, list)
    modules = ours.get("modules")
    assert isinstance(modules, list)
    for module in modules:
        assert module.pop("inspector_matched_by") in ("debug_id", "code_id", None)
    assert ours == ref


def test_corpus_cases_are_listed(corpus_dir: Path) -> None:
    assert len(CASES) >= 70
