"""`--dump` and `--dump --brief` against rust-minidump's own snapshots of them (minidump-stackwalk's tests,
`test.dmp`, copied into the corpus): the first part of our `dump` report is their text exactly."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector import cli
from inspector.core.report.dump_text import rust_minidump_part


@pytest.mark.golden
@pytest.mark.parametrize(("args", "snapshot"), [((), "dump"), (("--brief",), "dump-brief")])
def test_dump_is_the_references_snapshot(
    corpus_dir: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...], snapshot: str
) -> None:
    folder = corpus_dir / "rust-minidump"
    assert cli.main(["stackwalk", "--dump", *args, str(folder / "test.dmp")]) == 0
    ours = rust_minidump_part(capsys.readouterr().out)
    text = (folder / "expected" / f"test_minidump_stackwalk__{snapshot}.snap").read_text(encoding="utf-8")
    expected = text.split("---\n", 2)[2]  # after insta's header
    assert ours.rstrip("\n") == expected.rstrip("\n")  # insta keeps one final newline of its own
    assert ("Memory\n    00000000: " in ours) is (snapshot == "dump")
