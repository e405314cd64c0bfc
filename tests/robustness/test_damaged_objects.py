"""Bad binaries and debug files in a symbol path, through the command line.

Each variant puts one bad object into a build folder beside (or instead of) the good binary of
the `libc_abort` crash and walks the crash with `stackwalk --json`: a truncated ELF, a file that
says it is a PDB and is not, a `.debug` file of another build, a huge (sparse) file and hostile
headers. Each must exit 0 without a traceback, name the bad file with a reason in
`inspector_problems` when the file was read at all, and never give the module symbols from a
file that is not its own: `ledger` is loaded only when the good binary is there, and then its
frames are those of the good binary alone.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

pytest.importorskip("symbolic", reason="reading objects needs the symbolic package")

REPO = Path(__file__).resolve().parents[2]
CASE = REPO / "tests" / "fixtures" / "crashes" / "libc_abort"
GOOD = CASE / "binaries" / "ledger"
OTHER_BUILD = REPO / "tests" / "fixtures" / "crashes" / "cxx_terminate" / "binaries" / "settings_loader"
#: Longest one command may take (interpreter start included, on a loaded 2-core machine).
CLI_SECONDS = 60.0


def _truncated(path: Path) -> None:
    path.write_bytes(GOOD.read_bytes()[:3000])  # headers and the build-id note, no sections


def _cut_in_half(path: Path) -> None:
    data = GOOD.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _not_a_pdb(path: Path) -> None:
    path.write_bytes(b"Microsoft C/C++ MSF 7.00\r\n\x1aDS\x00\x00\x00" + b"\xff" * 4000)


def _other_build(path: Path) -> None:
    shutil.copyfile(OTHER_BUILD, path)


def _huge_sparse(path: Path) -> None:
    """16 GiB that take no disk: the good binary's first page (its build id too), then a hole."""
    with open(path, "wb") as f:
        f.write(GOOD.read_bytes()[:4096])
        f.truncate(16 << 30)


def _hostile_headers(path: Path) -> None:
    """The good binary with every section and program header count and offset set absurdly."""
    data = bytearray(GOOD.read_bytes())
    struct.pack_into("<Q", data, 0x20, 0xFFFF_FFFF_FFFF_0000)  # e_phoff
    struct.pack_into("<Q", data, 0x28, 0xFFFF_FFFF_FFFF_0000)  # e_shoff
    struct.pack_into("<HHHHHH", data, 0x34, 64, 56, 0xFFFF, 64, 0xFFFF, 0xFFFE)
    path.write_bytes(bytes(data))


def _hostile_fat_macho(path: Path) -> None:
    """A universal Mach-O header claiming a million architectures, each past the end of the file."""
    arches = b"".join(struct.pack(">iiIII", 7, 3, 0xFFFF_FF00, 0xFFFF_FFFF, 12) for _ in range(64))
    path.write_bytes(struct.pack(">II", 0xCAFEBABE, 1_000_000) + arches)


def _garbage_elf(path: Path) -> None:
    path.write_bytes(b"\x7fELF\x02\x01\x01" + os.urandom(5000))


#: name in the folder, how it is made, whether the good binary is beside it, whether the bad file
#: must be named in the problems (a file of another build is not an error: it is not ledger's)
VARIANTS: dict[str, tuple[str, Callable[[Path], None], bool, bool]] = {
    "truncated-elf": ("ledger.cut", _truncated, True, True),
    "truncated-elf-alone": ("ledger", _cut_in_half, False, True),
    "not-a-pdb": ("ledger.pdb", _not_a_pdb, True, True),
    "other-build-debug-file": ("ledger.debug", _other_build, False, False),
    "huge-sparse": ("ledger.huge", _huge_sparse, True, True),
    "hostile-headers": ("ledger.hostile", _hostile_headers, True, True),
    "hostile-fat-macho": ("ledger.fat", _hostile_fat_macho, True, True),
    "garbage-elf": ("ledger.garbage", _garbage_elf, True, True),
}


def _walk(folder: Path, cache: Path) -> tuple[subprocess.CompletedProcess[str], dict]:
    cmd = [sys.executable, "-m", "inspector", "stackwalk", "--json", "--no-local-modules"]
    cmd += ["--symbols-cache", str(cache), str(CASE / "libc_abort.dmp"), str(folder)]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=CLI_SECONDS, cwd=REPO, check=False)
    return run, (json.loads(run.stdout) if run.returncode == 0 else {})


def _ledger_frames(report: dict) -> list[tuple]:
    return [
        (f.get("function"), f.get("file"), f.get("line"))
        for t in report["threads"]
        for f in t["frames"]
        if f.get("module") == "ledger"
    ]


@pytest.fixture(scope="module")
def good_walk(tmp_path_factory: pytest.TempPathFactory) -> dict:
    folder = tmp_path_factory.mktemp("good")
    shutil.copyfile(GOOD, folder / "ledger")
    run, report = _walk(folder, tmp_path_factory.mktemp("good-cache"))
    assert run.returncode == 0, run.stderr
    return report


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_bad_object_is_a_problem_never_a_traceback_nor_a_wrong_match(
    variant: str, tmp_path: Path, good_walk: dict
) -> None:
    name, make, with_good, named = VARIANTS[variant]
    folder = tmp_path / "build"
    folder.mkdir()
    make(folder / name)
    if with_good:
        shutil.copyfile(GOOD, folder / "ledger")
    run, report = _walk(folder, tmp_path / "cache")
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    ledger = next(m for m in report["modules"] if m["filename"] == "ledger")
    if with_good:
        assert ledger.get("loaded_symbols"), ledger
        assert _ledger_frames(report) == _ledger_frames(good_walk)
    else:
        assert not ledger.get("loaded_symbols"), ledger
        assert all(f[0] is None for f in _ledger_frames(report))
    if named:
        problems = [p for p in report["inspector_problems"] if name in json.dumps(p)]
        assert problems, report["inspector_problems"]
        assert all("Traceback" not in json.dumps(p) for p in problems)
