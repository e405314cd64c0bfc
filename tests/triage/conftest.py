"""Own crashes (always present) and a folder of them with bad files mixed in, for the triage tests."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from inspector.core.triage import TriageOptions

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "crashes"

#: name -> (dump, symbol paths): tests/fixtures/crashes/README.md and resources/examples (the
#: Windows crashes of tests/fixtures/windows-crashes, with their own reference JSON, are apart)
OWN_CRASHES: dict[str, tuple[Path, tuple[Path, ...]]] = {
    "sample": (REPO / "resources/examples/sample.dmp", (REPO / "resources/examples/symbols",)),
    **{
        name: (FIXTURES / name / f"{name}.dmp", (FIXTURES / name / "symbols", FIXTURES / "system-symbols"))
        for name in ("fp_less_deep", "lib_callback", "libc_abort", "multithread", "cxx_terminate")
    },
    **{  # the crash-analysis cases: one-instruction crashes (fixtures README)
        name: (FIXTURES / name / f"{name}.dmp", (FIXTURES / name / "symbols", FIXTURES / "system-symbols"))
        for name in (
            "analysis_div_zero",
            "analysis_non_canonical",
            "analysis_null_call",
            "analysis_null_read",
            "analysis_null_write",
            "analysis_stack_push",
        )
    },
}


def own_symbol_paths() -> tuple[str, ...]:
    """Every own crash's symbol folders (one store layout, so one list serves them all)."""
    paths: dict[str, None] = {}
    for _, symbols in OWN_CRASHES.values():
        paths.update(dict.fromkeys(str(p) for p in symbols))
    return tuple(paths)


@pytest.fixture(scope="session")
def index_cache(tmp_path_factory: pytest.TempPathFactory) -> str:
    """One symbols cache root for the session: each .sym file is indexed once."""
    return str(tmp_path_factory.mktemp("triage-cache"))


@pytest.fixture
def own_options(index_cache: str) -> TriageOptions:
    return TriageOptions(symbol_paths=own_symbol_paths(), index_cache=index_cache)


#: The bad entries `crash_folder` holds, by the name the triage reports them under.
BAD_ENTRIES = ("broken/truncated.dmp", "broken/notes-not-a-dump.dmp", "broken/gone.dmp", "broken/folder.dmp")


@pytest.fixture
def crash_folder(tmp_path: Path) -> Path:
    """Own crashes under names a crash reporter might use (one without an extension), two copies of
    the sample, files that are no dumps and must be passed over, and the bad entries of
    `BAD_ENTRIES`: a truncated dump, a text file named .dmp, a dangling link named .dmp and a
    directory named .dmp (with a dump inside, which must still be found)."""
    root = tmp_path / "crashes"
    for name, (dump, _) in OWN_CRASHES.items():
        target = root / ("uploads" if name != "sample" else "") / f"{name}-report.dmp"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(dump, target)
    shutil.copyfile(OWN_CRASHES["sample"][0], root / "uploads" / "0123-abcd")  # no extension: by content
    broken = root / "broken"
    broken.mkdir()
    data = OWN_CRASHES["libc_abort"][0].read_bytes()
    (broken / "truncated.dmp").write_bytes(data[:1500])
    (broken / "notes-not-a-dump.dmp").write_text("this is not a minidump\n")
    os.symlink(broken / "does-not-exist", broken / "gone.dmp")
    (broken / "folder.dmp").mkdir()
    shutil.copyfile(OWN_CRASHES["sample"][0], broken / "folder.dmp" / "inside")
    (root / "README.txt").write_text("not a dump, not named like one: passed over\n")
    shutil.copytree(OWN_CRASHES["sample"][1][0], root / "symbols")  # .sym files: passed over
    return root


#: Everything the triage reports in `crash_folder`: each own crash, two more copies of the sample
#: (one without an extension, one inside the directory named .dmp) and the bad entries.
CRASH_FOLDER_ENTRIES = len(OWN_CRASHES) + 2 + len(BAD_ENTRIES)
