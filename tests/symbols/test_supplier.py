"""Finding a module's symbol file: store layouts, single files, code-id fallback, problems."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from inspector.core.module_identity import ModuleIdentity
from inspector.core.symbols import DamageKind, IndexCache, SymbolFile, SymbolStatus, SymbolSupplier
from inspector.core.symbols.errors import SymbolFileUnreadable
from inspector.core.symbols.supplier import code_id_path, debug_id_path, leafname, replace_or_add_extension
from tests.symbols.stand_ins import Module
from tests.synth.sym import SymBuilder

DEBUG_ID = "5A9832E5287241C1838ED98914E9B7FF1"


def test_module_stand_in_satisfies_the_protocol() -> None:
    assert isinstance(Module(), ModuleIdentity)


def test_leafname_handles_posix_and_windows_paths() -> None:
    assert leafname("/usr/lib/libc.so.6") == "libc.so.6"
    assert leafname("C:\\build\\out\\test_app.pdb") == "test_app.pdb"
    assert leafname("plain") == "plain"


def test_replace_or_add_extension_as_rust_minidump() -> None:
    assert replace_or_add_extension("foo.pdb", "pdb", "sym") == "foo.sym"
    assert replace_or_add_extension("foo.PDB", "pdb", "sym") == "foo.sym"
    assert replace_or_add_extension("foo.xyz", "pdb", "sym") == "foo.xyz.sym"
    assert replace_or_add_extension("foo", "pdb", "sym") == "foo.sym"
    assert replace_or_add_extension("foo.exe", "dll", "sym") == "foo.exe.sym"


def test_relative_paths() -> None:
    assert debug_id_path(Module(debug_file="C:\\x\\test_app.pdb", debug_id=DEBUG_ID)) == (
        f"test_app.pdb/{DEBUG_ID}/test_app.sym"
    )
    assert debug_id_path(Module(debug_file="libc.so.6", debug_id="ABC0")) == "libc.so.6/ABC0/libc.so.6.sym"
    assert (
        debug_id_path(Module(code_file="C:\\mingw\\app.exe", debug_id="ABC0")) == "app.exe/ABC0/app.exe.sym"
    )
    assert debug_id_path(Module(debug_file="x.pdb")) is None
    assert code_id_path(Module(code_file="C:\\Windows\\ntdll.dll", code_id="5b8fc0d2a1000")) == (
        "ntdll.dll/5B8FC0D2A1000/ntdll.sym"
    )
    assert code_id_path(Module(code_file="C:\\app.exe", code_id="ab12")) == "app.exe/AB12/app.exe.sym"
    assert code_id_path(Module(code_id="ab12")) is None


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "symbols"
    SymBuilder(debug_id=DEBUG_ID, name="test_app.pdb", os="windows", cpu="x86").func(
        0x10, 0x10, "main"
    ).write_to_store(root, "test_app.pdb")
    SymBuilder(debug_id="ABCDEF0", name="libfoo.so").public(0x100, "foo").write_to_store(root, "libfoo.so")
    return root


def test_folder_layout_with_pdb_replaced_by_sym(store: Path) -> None:
    supplier = SymbolSupplier([store])
    located = supplier.locate(Module("C:\\test_app.exe", "", "C:\\src\\test_app.pdb", DEBUG_ID))
    assert located.path == str(store / "test_app.pdb" / DEBUG_ID / "test_app.sym")
    assert located.found_by == "debug id"
    located = supplier.locate(Module("/lib/libfoo.so", "", "libfoo.so", "ABCDEF0"))
    assert located.path == str(store / "libfoo.so" / "ABCDEF0" / "libfoo.so.sym")


def test_empty_debug_file_falls_back_to_the_code_file(tmp_path: Path) -> None:
    SymBuilder(debug_id="1234", name="mingw.exe").public(0x10, "p").write_to_store(tmp_path, "mingw.exe")
    located = SymbolSupplier([tmp_path]).locate(Module(code_file="C:\\bin\\mingw.exe", debug_id="1234"))
    assert located.path == str(tmp_path / "mingw.exe" / "1234" / "mingw.exe.sym")


def test_single_file_matched_by_its_module_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    loose = SymBuilder(debug_id="FEED0", name="loose.so").public(0x10, "p").write(tmp_path / "anything.sym")
    other = SymBuilder(debug_id="BEEF0", name="other.so").public(0x10, "q").write(tmp_path / "other.sym")
    with open(loose, "ab") as f:
        f.write(b"\x00 not a record \xff\n" * 1000)  # only the first line is read to decide

    def no_parsing(*args: object, **kwargs: object) -> SymbolFile:
        raise AssertionError("locate must not parse symbol files")

    supplier = SymbolSupplier([other, loose])
    monkeypatch.setattr(SymbolFile, "open", no_parsing)
    located = supplier.locate(Module("/x/loose.so", "", "loose.so", "FEED0"))
    assert (located.path, located.found_by, located.tried) == (
        str(loose),
        "MODULE line",
        (str(other), str(loose)),
    )
    assert supplier.locate(Module("/x/loose.so", "", "loose.so", "0000")).path is None
    assert (
        supplier.locate(Module("/x/renamed.so", "", "renamed.so", "FEED0")).path is None
    )  # the name must match


def test_code_id_fallback_layout(tmp_path: Path) -> None:
    path = tmp_path / "ntdll.dll" / "5B8FC0D2A1000" / "ntdll.sym"
    SymBuilder(debug_id="AAAA1", name="ntdll.pdb").public(0x10, "RtlUserThreadStart").write(path)
    module = Module("C:\\Windows\\System32\\ntdll.dll", "5b8fc0d2a1000", "ntdll.pdb", "BBBB1")
    located = SymbolSupplier([tmp_path]).locate(module)
    assert (located.path, located.found_by) == (str(path), "code id")
    assert SymbolSupplier([tmp_path], code_id_fallback=False).locate(module).path is None
    # a module without a debug id is looked up by code id whatever the option says
    no_debug_id = Module("C:\\Windows\\System32\\ntdll.dll", "5b8fc0d2a1000", "", "")
    assert SymbolSupplier([tmp_path], code_id_fallback=False).locate(no_debug_id).path == str(path)


def test_paths_tried_in_order_first_hit_wins(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    for root in (first, second):
        SymBuilder(debug_id="AB0", name="lib.so").public(0x10, root.name).write_to_store(root, "lib.so")
    located = SymbolSupplier([second, first]).locate(Module("lib.so", "", "lib.so", "AB0"))
    assert located.path is not None and Path(located.path).is_relative_to(second)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs a named pipe")
def test_missing_and_odd_symbol_paths_are_reported_not_fatal(tmp_path: Path, store: Path) -> None:
    fifo = tmp_path / "a pipe"
    os.mkfifo(fifo)
    supplier = SymbolSupplier([tmp_path / "missing", fifo, store])
    assert [(p.path, p.reason) for p in supplier.problems] == [
        (str(tmp_path / "missing"), "does not exist"),
        (str(fifo), supplier.problems[1].reason),
    ]
    assert "not a file or directory" in supplier.problems[1].reason
    result = supplier.load(Module("/lib/libfoo.so", "", "libfoo.so", "ABCDEF0"))
    assert result.status is SymbolStatus.LOADED


def test_load_not_found_lists_every_path_tried(tmp_path: Path, store: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    module = Module("/lib/libbar.so", "12ab", "libbar.so", "0BAD0")
    result = SymbolSupplier([store, other], local_modules=False).load(module)
    assert result.status is SymbolStatus.NOT_FOUND and result.symbol_file is None
    assert result.tried == (
        str(store / "libbar.so/0BAD0/libbar.so.sym"),
        str(other / "libbar.so/0BAD0/libbar.so.sym"),
        str(store / "libbar.so/12AB/libbar.so.sym"),
        str(other / "libbar.so/12AB/libbar.so.sym"),
    )
    # with module files on this machine, the module's own path is looked at last
    assert SymbolSupplier([store, other]).load(module).tried[-1] == "/lib/libbar.so"


def test_load_without_any_identifier(store: Path) -> None:
    result = SymbolSupplier([store]).load(Module())
    assert result.status is SymbolStatus.NO_IDENTIFIER and result.tried == ()


def test_load_found_and_damaged(tmp_path: Path) -> None:
    SymBuilder(debug_id="D0", name="d.so").public(0x10, "p").raw("junk line").write_to_store(tmp_path, "d.so")
    SymBuilder(debug_id="C0", name="c.so").public(0x10, "p").write_to_store(tmp_path, "c.so")
    supplier = SymbolSupplier([tmp_path], cache=IndexCache(tmp_path / "cache"))
    clean = supplier.load(Module("c.so", "", "c.so", "C0"))
    assert clean.status is SymbolStatus.LOADED and clean.found and not clean.rust_minidump_corrupt
    assert clean.symbol_file is not None and clean.symbol_file.index_source == "built+stored"
    damaged = supplier.load(Module("d.so", "", "d.so", "D0"))
    assert damaged.status is SymbolStatus.DAMAGED and damaged.found
    assert damaged.damage is not None and damaged.damage.counts == {DamageKind.UNKNOWN_RECORD: 1}
    assert damaged.rust_minidump_corrupt and damaged.load_seconds > 0
    for result in (clean, damaged):
        assert result.symbol_file is not None
        result.symbol_file.close()


def test_load_of_an_unreadable_file(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def unreadable(path: object, **kwargs: object) -> SymbolFile:
        raise SymbolFileUnreadable(str(path), "Permission denied")

    monkeypatch.setattr(SymbolFile, "open", unreadable)
    result = SymbolSupplier([store]).load(Module("/lib/libfoo.so", "", "libfoo.so", "ABCDEF0"))
    assert result.status is SymbolStatus.UNREADABLE and result.error == "Permission denied"
    assert result.path == str(store / "libfoo.so" / "ABCDEF0" / "libfoo.so.sym")


def test_a_name_too_long_for_the_file_system_is_not_found(store: Path) -> None:
    """Found by fuzzing microdumps: a 600-byte module name made `Path.is_file` raise ENAMETOOLONG."""
    name = "lib" + "x" * 600 + ".so"
    supplier = SymbolSupplier([store], code_id_fallback=True)
    located = supplier.locate(Module(code_file=name, code_id="abcd", debug_file=name, debug_id=DEBUG_ID))
    assert located.path is None and len(located.tried) == 2
    assert supplier.load(Module(debug_file=name, debug_id=DEBUG_ID)).status is SymbolStatus.NOT_FOUND
