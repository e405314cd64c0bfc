"""What the drop-in tests share: our console script, the reference stackwalker (when installed), the crashes.

The reference is rust-minidump's `minidump-stackwalk` 0.25.0 as `../shared/tools/install-peers
bench/data/peers` installs it. Tests never download it: where it is missing, the comparison with
it is skipped with the reason, and a comparison with recorded reference results stands in.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import Case, read_cases

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "crashes"
WINDOWS_FIXTURES = REPO / "tests" / "fixtures" / "windows-crashes"
SAMPLE = REPO / "resources" / "examples"
REFERENCE_VERSION = "minidump-stackwalk 0.25.0"
REFERENCE_BINARY = REPO / "bench" / "data" / "peers" / "minidump-stackwalk"
NO_REFERENCE = (
    f"no {REFERENCE_VERSION} at {REFERENCE_BINARY.relative_to(REPO)} "
    "(install it with ../shared/tools/install-peers bench/data/peers; tests never download it)"
)


def our_script() -> Path:
    """The installed `inspector-stackwalk` console script (beside the interpreter running the tests)."""
    script = Path(sys.executable).parent / "inspector-stackwalk"
    assert script.is_file(), f"{script} is missing: install the project again (pip install -e '.[test]')"
    return script


def reference_binary() -> Path | None:
    """The reference stackwalker if it is installed and is version 0.25.0."""
    if not REFERENCE_BINARY.is_file():
        return None
    try:
        done = subprocess.run(
            [str(REFERENCE_BINARY), "--version"], capture_output=True, text=True, timeout=30, check=False
        )
    except OSError:
        return None
    return REFERENCE_BINARY if done.stdout.strip() == REFERENCE_VERSION else None


@dataclass(frozen=True)
class OwnCrash:
    """A real crash of ours: the dump and the symbol stores it needs."""

    name: str
    dump: Path
    symbol_paths: tuple[Path, ...]

    def merged_symbols(self, into: Path) -> Path:
        """One symbol store linking every store's modules: mozcrash passes a single symbols path."""
        into.mkdir(parents=True, exist_ok=True)
        for store in self.symbol_paths:
            for module in store.iterdir():
                (into / module.name).symlink_to(module, target_is_directory=module.is_dir())
        return into

    def dump_folder(self, into: Path) -> Path:
        """A folder holding only a copy of the dump (mozcrash processes every `*.dmp` of a folder)."""
        into.mkdir(parents=True, exist_ok=True)
        shutil.copy(self.dump, into / self.dump.name)
        return into


def own_crashes() -> list[OwnCrash]:
    """The Linux crashes of `tests/fixtures/crashes` and the bundled sample."""
    crashes = [
        OwnCrash(case.name, case / f"{case.name}.dmp", (case / "symbols", FIXTURES / "system-symbols"))
        for case in sorted(FIXTURES.iterdir())
        if (case / f"{case.name}.dmp").is_file()
    ]
    crashes.append(OwnCrash("sample", SAMPLE / "sample.dmp", (SAMPLE / "symbols",)))
    return crashes


def windows_crashes() -> list[OwnCrash]:
    """The Windows crashes of `tests/fixtures/windows-crashes` (each beside its `.reference.json`)."""
    return [
        OwnCrash(f"{dump.parent.name}/{dump.stem}", dump, (WINDOWS_FIXTURES / "symbols",))
        for build in ("O1", "O2")
        for dump in sorted((WINDOWS_FIXTURES / build).glob("*.dmp"))
    ]


#: Cases whose `.sym` file rust-minidump 0.25 refuses and we read (tests/golden/KNOWN_DIFFERENCES.md,
#: section 1): our frame 0 is named, so a signature of ours is the one the reference gives once the
#: file is accepted, in the case named here.
WITH_THE_FILE_ACCEPTED = {
    "breakpad/linux_inline": "breakpad/linux_inline.new-inline-syms-with-final-newline",
    "breakpad/linux_inline.old-inline-syms": "breakpad/linux_inline.new-inline-syms-with-final-newline",
}


def expected_case(case: Case) -> Case:
    """The case whose reference result ours must equal (itself, but for `WITH_THE_FILE_ACCEPTED`)."""
    label = WITH_THE_FILE_ACCEPTED.get(case[0])
    if label is None:
        return case
    return next(c for c in read_cases() if c[0] == label)
