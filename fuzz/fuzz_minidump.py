"""Coverage-guided fuzzing of the minidump reader, the stackwalker and the reports (atheris).

    python fuzz/fuzz_minidump.py fuzz/corpus/minidump -max_total_time=600 -timeout=10 -rss_limit_mb=2048

Each input is read as a minidump, every stream parsed, the dump report rendered, every
thread walked (with the repository's own symbol files, so STACK CFI runs on fuzzed stacks)
and the JSON / human / machine reports rendered. Only
`InspectorError`s may escape (in strict mode: a parser's own Python exception is not
turned into a "bad data" problem); anything else, a hang (`-timeout`) or a blow-up of memory
(`-rss_limit_mb`) is a finding. See fuzz/README.md.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import atheris
from _seeds import corpus_argument

with atheris.instrument_imports(include=["inspector"]):
    from inspector.core.errors import InspectorError
    from inspector.core.minidump import Minidump
    from inspector.core.process import ProcessOptions, process
    from inspector.core.report.dump_text import render_dump
    from inspector.core.report.human import render_human
    from inspector.core.report.json_report import render_json
    from inspector.core.report.machine import render_machine
    from inspector.core.strict import set_strict
    from inspector.core.unwind import WalkOptions

REPO = Path(__file__).resolve().parent.parent
#: The seeds' own symbols, so that fuzzed stacks are walked by STACK CFI too (the mutated dumps
#: keep their modules' debug ids). The index cache lives in a temporary directory.
SYMBOLS = (
    REPO / "resources" / "examples" / "symbols",
    *sorted((REPO / "tests" / "fixtures" / "crashes").glob("*/symbols")),
    REPO / "tests" / "fixtures" / "crashes" / "system-symbols",
)
#: Hostile stacks may hold thousands of plausible frames; the cap keeps one input short.
OPTIONS = ProcessOptions(
    symbol_paths=tuple(p for p in SYMBOLS if p.is_dir()),
    symbols_cache=tempfile.mkdtemp(prefix="fuzz-minidump-symbols-"),
    walk=WalkOptions(max_frames=512),
)


def test_one_input(data: bytes) -> None:
    try:
        dump = Minidump.from_bytes(data)
    except InspectorError:
        return
    try:
        dump.parse_all()
        render_dump(dump)
        state = process(dump, OPTIONS)
    except InspectorError:
        return
    render_json(state)
    render_human(state, trace=True)
    render_machine(state)


def main() -> None:
    set_strict(True)  # a parser's own IndexError or ValueError is a finding, not "bad data"
    corpus_argument("minidump", sys.argv)
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
