"""Modules without a debug id: the identity rule, the store index and its disk cache, the supplier.

The symbol files are the real ones of `tests/fixtures/windows-crashes/symbols` (dump_syms from
wine's DLLs and from our own PDBs), copied into temporary stores where a test changes them.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from inspector.core.cancel import CancelToken
from inspector.core.errors import Cancelled
from inspector.core.symbols import (
    IndexCache,
    MatchedBy,
    ObjectIdentity,
    StoreIndex,
    SymbolStatus,
    SymbolSupplier,
    match,
    pe_code_id,
)
from inspector.core.symbols.store_index import read_header
from tests.symbols.server.http_server import Module

REPO = Path(__file__).resolve().parents[2]
STORE = REPO / "tests" / "fixtures" / "windows-crashes" / "symbols"
NTDLL_SYM = STORE / "ntdll.dll" / "63F14E2B361000" / "ntdll.sym"
KERNEL32_SYM = STORE / "kernel32.dll" / "63F14E2B195000" / "kernel32.sym"


NTDLL = Module("C:\\windows\\system32\\ntdll.dll", "63f14e2b361000")
#: the same DLL with a SizeOfImage one page larger: another build of ntdll.dll
NTDLL_WRONG_CODE_ID = Module("C:\\windows\\system32\\ntdll.dll", "63f14e2b362000")


def crashlab_sym() -> Path:
    syms = sorted((STORE / "crashlab.pdb").glob("*/crashlab.sym"))
    assert len(syms) == 2
    return syms[0]


# ---- the identity rule -------------------------------------------------------------------


def test_a_module_with_a_debug_id_matches_by_debug_id_only() -> None:
    module = Module(
        "C:\\app\\app.exe", "5b8fc0d2a1000", "C:\\build\\app.pdb", "0123456789ABCDEF0123456789ABCDEF1"
    )
    same = ObjectIdentity("app.pdb", "0123456789abcdef0123456789abcdef1", "app.exe", "5B8FC0D2A1000")
    assert match(module, same) is MatchedBy.DEBUG_ID
    other_id = ObjectIdentity("app.pdb", "0123456789ABCDEF0123456789ABCDEF2", "app.exe", "5B8FC0D2A1000")
    assert match(module, other_id) is None  # the code id agreeing does not make up for it
    other_name = ObjectIdentity("lib.pdb", "0123456789ABCDEF0123456789ABCDEF1")
    assert match(module, other_name) is None


def test_a_module_without_a_debug_id_matches_by_code_file_and_code_id() -> None:
    header = read_header(NTDLL_SYM)
    assert header == ObjectIdentity("ntdll.dll", "0" * 33, "ntdll.dll", "63F14E2B361000")
    assert match(NTDLL, header) is MatchedBy.CODE_ID
    assert match(NTDLL_WRONG_CODE_ID, header) is None
    # a zero debug id is no debug id: the module is still matched by code id only
    assert match(Module(NTDLL.code_file, NTDLL.code_id, "", "0" * 33), header) is MatchedBy.CODE_ID
    # the right code id under another name: wine builds all its DLLs with one timestamp
    assert match(Module("C:\\windows\\system32\\ntdlx.dll", NTDLL.code_id), header) is None
    # a name alone, or a code id without a name, never matches
    assert match(Module("C:\\windows\\system32\\ntdll.dll", ""), header) is None
    assert match(Module("", NTDLL.code_id), header) is None
    assert match(NTDLL, ObjectIdentity("ntdll.pdb", "", "", "63F14E2B361000")) is None


def test_the_rule_chains_a_pe_to_its_pdb() -> None:
    """What the symbols-from-binaries work does: PE by TimeDateStamp + SizeOfImage, then its PDB."""
    module = Module("Z:\\tmp\\crashlab.exe", "d55baf673d000")  # a wine dump: no CodeView, no debug id
    pe = ObjectIdentity(
        "crashlab.pdb", "F43E5C185013D8DE4C4C44205044422E1", "crashlab.exe", pe_code_id(0xD55BAF67, 0x3D000)
    )
    assert pe.code_id == "D55BAF673D000"
    assert match(module, pe) is MatchedBy.CODE_ID
    assert (
        match(pe, ObjectIdentity("crashlab.pdb", "F43E5C185013D8DE4C4C44205044422E1")) is MatchedBy.DEBUG_ID
    )
    assert match(pe, ObjectIdentity("crashlab.pdb", "F43E5C185013D8DE4C4C44205044422E2")) is None


# ---- the supplier on the real store --------------------------------------------------------


def test_zero_debug_id_and_wrong_code_id_is_not_matched(tmp_path: Path) -> None:
    """The acceptance test: the store has ntdll.dll's symbols, but not for this build of it."""
    store = tmp_path / "symbols"
    shutil.copytree(STORE, store)
    # a trap: the same file where a lookup by name and zero id would look
    trap = store / "ntdll.dll" / ("0" * 33) / "ntdll.dll.sym"
    trap.parent.mkdir(parents=True)
    shutil.copyfile(NTDLL_SYM, trap)
    # and a single .sym file path that names ntdll.dll
    single = tmp_path / "ntdll.sym"
    shutil.copyfile(NTDLL_SYM, single)

    supplier = SymbolSupplier([store, single], cache=IndexCache(None))
    for module in (NTDLL_WRONG_CODE_ID, Module(NTDLL.code_file, NTDLL_WRONG_CODE_ID.code_id, "", "0" * 33)):
        result = supplier.load(module)
        assert result.status is SymbolStatus.NOT_FOUND
        assert result.match is None
        assert result.tried == (
            str(store / "ntdll.dll" / "63F14E2B362000" / "ntdll.sym"),
            f"{store} (every .sym file's INFO CODE_ID line)",
            str(single),
        )
    # the right code id is found, in the code-id layout first
    found = supplier.load(NTDLL)
    assert (found.status, found.path, found.found_by) == (
        SymbolStatus.LOADED,
        str(store / NTDLL_SYM.relative_to(STORE)),
        "code id",
    )
    assert found.match is not None and found.match.by is MatchedBy.CODE_ID
    assert found.match.file == read_header(NTDLL_SYM)
    # no code id at all: nothing to look up by
    assert supplier.load(Module(NTDLL.code_file)).status is SymbolStatus.NO_IDENTIFIER


def test_a_store_laid_out_by_debug_id_is_searched_by_its_info_code_id_lines(tmp_path: Path) -> None:
    sym = crashlab_sym()
    header = read_header(sym)
    assert header is not None and header.debug_file == "crashlab.pdb" and header.code_file == "crashlab.exe"
    module = Module("Z:\\tmp\\crash-inspector-windows-crashes\\run\\O1\\crashlab.exe", header.code_id.lower())
    supplier = SymbolSupplier([STORE], cache=IndexCache(None))
    result = supplier.load(module)
    assert (result.status, result.path, result.found_by) == (
        SymbolStatus.LOADED,
        str(sym),
        "INFO CODE_ID line",
    )
    assert result.match is not None and result.match.by is MatchedBy.CODE_ID
    assert result.match.file.debug_id == header.debug_id
    # one digit off in the size: not this program
    wrong = Module(module.code_file, header.code_id[:-1].lower() + "1")
    assert supplier.load(wrong).status is SymbolStatus.NOT_FOUND


def test_a_single_sym_file_is_matched_by_its_info_code_id_line(tmp_path: Path) -> None:
    single = tmp_path / "anything.sym"
    shutil.copyfile(KERNEL32_SYM, single)
    supplier = SymbolSupplier([single])
    located = supplier.locate(Module("C:\\windows\\system32\\KERNEL32.DLL", "63F14E2B195000"))
    assert (located.path, located.found_by, located.matched_by) == (
        str(single),
        "INFO CODE_ID line",
        MatchedBy.CODE_ID,
    )
    assert supplier.locate(Module("C:\\windows\\system32\\kernel32.dll", "63f14e2b195001")).path is None


def test_a_code_id_layout_file_naming_another_code_id_is_refused(tmp_path: Path) -> None:
    misplaced = tmp_path / "ntdll.dll" / "63F14E2B362000" / "ntdll.sym"
    misplaced.parent.mkdir(parents=True)
    shutil.copyfile(NTDLL_SYM, misplaced)  # its INFO CODE_ID line says 63F14E2B361000
    assert SymbolSupplier([tmp_path], cache=IndexCache(None)).locate(NTDLL_WRONG_CODE_ID).path is None


def test_modules_with_a_debug_id_do_not_use_the_store_index(tmp_path: Path) -> None:
    """rust-minidump's local lookup for them is unchanged: no index is built."""
    header = read_header(crashlab_sym())
    assert header is not None
    supplier = SymbolSupplier([STORE], cache=IndexCache(tmp_path))
    module = Module("C:\\x\\crashlab.exe", header.code_id, "crashlab.pdb", "AB" * 16 + "1")
    assert supplier.locate(module).path is None
    assert list(tmp_path.iterdir()) == []


# ---- the index and its cache ---------------------------------------------------------------


def _index_files(cache: Path) -> list[Path]:
    return sorted(cache.glob("*.storeidx"))


def test_the_index_is_cached_and_follows_changes_to_the_store(tmp_path: Path) -> None:
    store = tmp_path / "symbols"
    shutil.copytree(STORE, store)
    (store / ".partial").mkdir()
    shutil.copyfile(NTDLL_SYM, store / ".partial" / "half.sym")  # a download in progress: skipped
    cache = tmp_path / "cache"
    count = len(list(STORE.rglob("*.sym")))

    first = StoreIndex(store, cache)
    assert [p for p, _ in first.candidates(NTDLL)] == [str(store / NTDLL_SYM.relative_to(STORE))]
    assert (first.files_read, first.from_cache) == (count, 0)
    [entry] = _index_files(cache)
    document = json.loads(entry.read_text(encoding="utf-8"))
    assert document["root"] == os.path.realpath(store)
    assert len(document["files"]) == count

    second = StoreIndex(store, cache)
    assert [p for p, _ in second.candidates(NTDLL)] == [str(store / NTDLL_SYM.relative_to(STORE))]
    assert (second.files_read, second.from_cache) == (0, count)  # not one header read again
    mtime = entry.stat().st_mtime_ns

    # a file rewritten with another code id, one added in a flat folder, one removed
    moved = store / NTDLL_SYM.relative_to(STORE)
    text = moved.read_text(encoding="utf-8").replace(
        "INFO CODE_ID 63F14E2B361000", "INFO CODE_ID 63F14E2B362000"
    )
    moved.write_text(text, encoding="utf-8")
    os.utime(moved, ns=(moved.stat().st_atime_ns, moved.stat().st_mtime_ns + 1_000_000_000))
    (store / "flat").mkdir()
    shutil.copyfile(KERNEL32_SYM, store / "flat" / "k32.sym")
    shutil.rmtree(store / "kernel32.dll")

    third = StoreIndex(store, cache)
    assert third.candidates(NTDLL) == []
    assert [p for p, _ in third.candidates(NTDLL_WRONG_CODE_ID)] == [str(moved)]
    kernel32 = Module("C:\\windows\\system32\\kernel32.dll", "63f14e2b195000")
    assert [p for p, _ in third.candidates(kernel32)] == [str(store / "flat" / "k32.sym")]
    assert (third.files_read, third.from_cache) == (2, count - 2)
    assert entry.stat().st_mtime_ns != mtime  # rewritten
    assert len(json.loads(entry.read_text(encoding="utf-8"))["files"]) == count


@pytest.mark.parametrize(
    "damage", [b"", b"{not json", b'{"format": "something else", "version": 1}', b"[1, 2]"]
)
def test_a_damaged_cache_entry_is_rebuilt(tmp_path: Path, damage: bytes) -> None:
    cache = tmp_path / "cache"
    index = StoreIndex(STORE, cache)
    cache_path = index.cache_path()
    assert cache_path is not None
    path = Path(cache_path)
    cache.mkdir()
    path.write_bytes(damage)
    assert [p for p, _ in index.candidates(NTDLL)] == [str(NTDLL_SYM)]
    assert index.from_cache == 0
    assert json.loads(path.read_text(encoding="utf-8"))["version"] == 1


def test_an_unwritable_cache_still_finds_the_files(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("x", encoding="utf-8")
    index = StoreIndex(STORE, blocker / "cache")
    assert [p for p, _ in index.candidates(NTDLL)] == [str(NTDLL_SYM)]
    assert StoreIndex(STORE, None).candidates(NTDLL) == index.candidates(NTDLL)


def test_read_header_of_files_that_are_not_symbol_files(tmp_path: Path) -> None:
    assert read_header(tmp_path / "missing.sym") is None
    (tmp_path / "empty.sym").write_bytes(b"")
    assert read_header(tmp_path / "empty.sym") is None
    (tmp_path / "text.sym").write_bytes(b"hello\nINFO CODE_ID 1234 x.dll\n")
    assert read_header(tmp_path / "text.sym") is None
    # no final newline, INFO CODE_ID without a file name: the ELF convention names the object
    (tmp_path / "elf.sym").write_bytes(b"MODULE Linux x86_64 0000 libx.so\nINFO CODE_ID ABCD")
    assert read_header(tmp_path / "elf.sym") == ObjectIdentity("libx.so", "0000", "libx.so", "ABCD")
    # a PDB's .sym without a code file on the INFO line names no code file
    (tmp_path / "pdb.sym").write_bytes(
        b"MODULE windows x86_64 0000 a.pdb\r\nINFO CODE_ID ABCD\r\nFILE 0 a.c\n"
    )
    assert read_header(tmp_path / "pdb.sym") == ObjectIdentity("a.pdb", "0000", "", "ABCD")


def test_indexing_a_folder_can_be_cancelled(tmp_path: Path) -> None:
    """A folder may be huge: a cancelled walk stops, caches nothing, and the next lookup starts again."""
    store = tmp_path / "symbols"
    for i in range(600):
        (store / f"d{i:03}").mkdir(parents=True)
        (store / f"d{i:03}" / "x.sym").write_bytes(b"MODULE windows x86_64 0 x.pdb\n")
    shutil.copyfile(NTDLL_SYM, store / "ntdll.sym")
    token = CancelToken()
    token.cancel()
    supplier = SymbolSupplier([store], cache=IndexCache(tmp_path / "cache"))
    with pytest.raises(Cancelled):
        supplier.locate(NTDLL, token)  # (`load` looks at the token first; `locate` only while indexing)
    assert not (tmp_path / "cache").exists()
    assert supplier.load(NTDLL).path == str(store / "ntdll.sym")
