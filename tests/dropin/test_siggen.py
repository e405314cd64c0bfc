"""Socorro's signature generation (`siggen`: how crash-stats groups crashes) on our JSON and the reference's.

siggen reads the crashing thread's frames of a `json_dump` (rust-minidump's JSON) and builds a
signature: sentinel frames, frames to skip, prefix frames joined with ` | `, C++ names
normalised. For every corpus dump, ours must give the signature, the notes and the whole proto
signature (every frame of the crashing thread, normalised) that the reference's JSON gives.
For the two cases whose `.sym` file only we accept, the signature and notes are those the
reference gives with the file accepted.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector import cli
from tests.conftest import CORPUS, Case, read_cases
from tests.dropin.common import WITH_THE_FILE_ACCEPTED, expected_case
from tests.golden.conftest import case_params

generator = pytest.importorskip("siggen.generator", reason="siggen is part of the test extra")
utils = pytest.importorskip("siggen.utils", reason="siggen is part of the test extra")


def signature(document: dict[str, object]) -> tuple[str, list[str], str]:
    result = generator.SignatureGenerator().generate(utils.convert_to_crash_data({"json_dump": document}))
    return result.signature, result.notes, result.extra["proto_signature"]


@pytest.mark.golden
@pytest.mark.parametrize("case", case_params(read_cases()))
def test_siggen_gives_the_references_signature(
    corpus_dir: Path, case: Case, symbols_cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, dump, symbol_paths, _ = case
    argv = ["stackwalk", "--json", "--symbols-cache", str(symbols_cache), str(CORPUS / dump)]
    assert cli.main([*argv, *(str(CORPUS / p) for p in symbol_paths)]) == 0
    ours = json.loads(capsys.readouterr().out)
    reference = json.loads((CORPUS / expected_case(case)[3]).read_text(encoding="utf-8"))
    if case[0] in WITH_THE_FILE_ACCEPTED:
        # the walk beyond frame 0 is the one without the file (KNOWN_DIFFERENCES.md, section 1)
        assert signature(ours)[:2] == signature(reference)[:2]
    else:
        assert signature(ours) == signature(reference)
