"""Coverage-guided fuzzing of the microdump reader, the stackwalker and the reports (atheris).

    python fuzz/fuzz_microdump.py fuzz/corpus/microdump -max_total_time=600 -timeout=10 -rss_limit_mb=2048

Each input is read as a log holding microdumps (every microdump of it in turn, at most 4),
its records parsed, the microdump report rendered, the thread walked (with the synthetic
seeds' symbols, so STACK CFI runs on fuzzed stacks) and the JSON / human / machine reports
rendered. Only `InspectorError`s may escape; anything else, a hang (`-timeout`) or a blow-up
of memory (`-rss_limit_mb`) is a finding. See fuzz/README.md.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import atheris
from _seeds import corpus_argument

with atheris.instrument_imports(include=["inspector"]):
    from inspector.core.errors import InspectorError
    from inspector.core.microdump.dump import Microdump
    from inspector.core.process import ProcessOptions, process
    from inspector.core.report.human import render_human
    from inspector.core.report.json_report import render_json
    from inspector.core.report.machine import render_machine
    from inspector.core.report.microdump_text import render_microdump
    from inspector.core.strict import set_strict
    from inspector.core.unwind import WalkOptions

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # the synthetic seeds' symbols are built by tests/synth
    sys.path.insert(0, str(REPO))
from tests.synth.microdump import write_arm_crash_symbols  # noqa: E402

SYMBOLS = write_arm_crash_symbols(Path(tempfile.mkdtemp(prefix="fuzz-microdump-sym-")))
OPTIONS = ProcessOptions(
    symbol_paths=(SYMBOLS,),
    symbols_cache=tempfile.mkdtemp(prefix="fuzz-microdump-index-"),
    walk=WalkOptions(max_frames=512),
)


def test_one_input(data: bytes) -> None:
    index = 0
    while index < 4:
        try:
            dump = Microdump.from_bytes(data, index=index)
        except InspectorError:
            return
        render_microdump(dump)
        try:
            state = process(dump, OPTIONS)
        except InspectorError:
            return
        render_json(state)
        render_human(state, trace=True)
        render_machine(state)
        if dump.info.count <= index + 1:
            return
        index += 1


def main() -> None:
    set_strict(True)  # a parser's own IndexError or ValueError is a finding, not "bad data"
    corpus_argument("microdump", sys.argv)
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
