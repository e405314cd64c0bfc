"""What a process keeps from one dump to the next on the symbol side, and that a change is noticed.

Validated small symbol indexes (`cache._KEPT`) with what was parsed through them (`ParsedText`),
and the object listings of symbol folders (`objects.sources._SCANS`) live as long as the process;
each is used again only while the files it came from are unchanged, and only once they had
settled (a change made within the same clock tick as their last one would not show in their
modification time).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from inspector.core.symbols import IndexCache, SymbolFile, SymbolSupplier, symbol_file
from inspector.core.symbols import cache as cache_module
from inspector.core.symbols.cache import absence_witness, present_witness, witnesses_hold
from inspector.core.symbols.index_format import IndexImage
from inspector.core.symbols.objects import sources
from inspector.core.symbols.objects.sources import ObjectSources
from inspector.core.symbols.records import DamageKind
from inspector.core.types import path_text
from tests.symbols.stand_ins import Module
from tests.synth.sym import SymBuilder

HOUR_AGO_NS = 3600 * 10**9


def _age(*paths: Path, by_ns: int = HOUR_AGO_NS) -> None:
    """Set modification times back: what a folder or file looks like once it has settled."""
    for path in paths:
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - by_ns))


def _age_tree(root: Path, by_ns: int = HOUR_AGO_NS) -> None:
    _age(*sorted(root.rglob("*")), root, by_ns=by_ns)


@pytest.fixture
def validations(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per index image validated (read from disk or built)."""
    seen: list[int] = []
    validate = IndexImage._validate

    def counting(self: IndexImage, *args: object) -> None:
        seen.append(1)
        validate(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(IndexImage, "_validate", counting)
    return seen


def _symbols(tmp_path: Path) -> Path:
    return (
        SymBuilder(debug_id="ABCD0", name="libkept.so")
        .func(0x100, 0x20, "kept_function", lines=[(0x100, 0x20, 3, 0)])
        .file(0, "kept.c")
        .write(tmp_path / "libkept.so.sym")
    )


def _entry(cache: IndexCache) -> Path:
    [entry] = Path(str(cache.directory)).glob("*.symidx")
    return entry


# ---- symbol indexes ---------------------------------------------------------------------------


def test_a_settled_index_is_read_and_validated_once_then_shared(
    tmp_path: Path, cache: IndexCache, validations: list[int]
) -> None:
    sym = _symbols(tmp_path)
    with SymbolFile.open(sym, cache=cache) as built:
        assert built.index_source == "built+stored"
    _age(_entry(cache))
    validations.clear()
    first = SymbolFile.open(sym, cache=IndexCache(cache.directory))  # the next dump's own cache object
    second = SymbolFile.open(sym, cache=IndexCache(cache.directory))
    assert (first.index_source, second.index_source) == ("cache", "cache")
    assert len(validations) == 1  # the second dump uses the index the first one validated
    first.close()  # closing one user leaves the shared index to the others
    symbol = second.symbolize(0x110)
    assert symbol is not None and symbol.function_name == "kept_function" and symbol.source_line == 3
    second.close()
    with SymbolFile.open(sym, cache=cache) as third:
        assert third.symbolize(0x110) == symbol
    assert len(validations) == 1


def test_an_index_written_a_moment_ago_is_not_kept(
    tmp_path: Path, cache: IndexCache, validations: list[int]
) -> None:
    sym = _symbols(tmp_path)
    SymbolFile.open(sym, cache=cache).close()
    validations.clear()
    for _ in range(2):
        with SymbolFile.open(sym, cache=cache) as sf:
            assert sf.index_source == "cache"
    assert len(validations) == 2  # the entry might still change within its clock tick: read each time


def test_a_kept_index_is_not_used_once_its_entry_changed(
    tmp_path: Path, cache: IndexCache, validations: list[int]
) -> None:
    sym = _symbols(tmp_path)
    SymbolFile.open(sym, cache=cache).close()
    entry = _entry(cache)
    _age(entry)
    SymbolFile.open(sym, cache=cache).close()  # kept now
    # damaged in place (same inode and size), at another (old) time: read again, rejected, rebuilt
    data = bytearray(entry.read_bytes())
    data[-1] ^= 0xFF
    entry.write_bytes(bytes(data))
    _age(entry, by_ns=2 * HOUR_AGO_NS)
    with SymbolFile.open(sym, cache=cache) as sf:
        assert sf.index_source == "built+stored"
        assert "ChecksumMismatch" in cache.events[-2], list(cache.events)
        assert sf.symbolize(0x110) is not None


def test_a_kept_index_is_not_given_to_a_changed_sym_file(tmp_path: Path, cache: IndexCache) -> None:
    sym = _symbols(tmp_path)
    SymbolFile.open(sym, cache=cache).close()
    _age(_entry(cache))
    SymbolFile.open(sym, cache=cache).close()  # kept now
    text = sym.read_text(encoding="utf-8").replace("kept_function", "other_function")
    sym.write_text(text + "PUBLIC 300 0 added\n", encoding="utf-8")
    with SymbolFile.open(sym, cache=cache) as sf:
        assert sf.index_source == "built+stored"
        symbol = sf.symbolize(0x110)
        assert symbol is not None and symbol.function_name == "other_function"


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The offsets of the FUNC and STACK CFI blocks parsed from the text."""
    seen: list[int] = []
    for name in ("parse_function_block", "parse_cfi_block"):
        parse = getattr(symbol_file, name)

        def counting(raw: bytes, offset: int, parse: Any = parse) -> object:
            seen.append(offset)
            return parse(raw, offset)

        monkeypatch.setattr(symbol_file, name, counting)
    return seen


def _kept(sym: Path, cache: IndexCache) -> None:
    """Let `sym` settle, index it, and let its index settle, so that the next open keeps the index."""
    _age(sym)
    SymbolFile.open(sym, cache=cache).close()
    _age(_entry(cache))


def test_files_sharing_a_kept_index_share_what_was_parsed(
    tmp_path: Path, cache: IndexCache, parses: list[int]
) -> None:
    sym = (
        SymBuilder(debug_id="ABCD0", name="libkept.so")
        .func(0x100, 0x20, "kept_function", lines=[(0x100, 0x20, 3, 0)])
        .file(0, "kept.c")
        .cfi(0x100, 0x20, ".cfa: $rsp 8 + .ra: .cfa -8 + ^", [(0x104, ".cfa: $rsp 16 +")])
        .write(tmp_path / "libkept.so.sym")
    )
    _kept(sym, cache)
    with SymbolFile.open(sym, cache=IndexCache(cache.directory)) as first:
        symbol, cfi = first.symbolize(0x110), first.find_cfi(0x110)
    assert len(parses) == 2
    with SymbolFile.open(sym, cache=IndexCache(cache.directory)) as second:  # the next dump's
        assert (second.symbolize(0x110), second.find_cfi(0x110)) == (symbol, cfi)
        assert second.find_cfi(0x108) is cfi  # the same rows in force: composed once
    assert len(parses) == 2
    assert symbol is not None and (symbol.function_name, symbol.source_file) == ("kept_function", "kept.c")


def test_each_file_reports_the_damage_of_the_shared_blocks_it_reads(
    tmp_path: Path, cache: IndexCache
) -> None:
    sym = (
        SymBuilder(debug_id="ABCD0", name="libkept.so")
        .func(0x100, 0x20, "damaged", lines=[(0x100, 0x10, 3, 0)])
        .raw("110 zz 4 0")
        .func(0x200, 0x20, "sound", lines=[(0x200, 0x20, 5, 0)])
        .file(0, "kept.c")
        .write(tmp_path / "libkept.so.sym")
    )
    _kept(sym, cache)
    with SymbolFile.open(sym, cache=cache) as first:
        assert first.find_line(0x104) is not None
        assert first.damage.counts == {DamageKind.BAD_LINE: 1}
    with SymbolFile.open(sym, cache=cache) as second:
        assert not second.damage.damaged  # it has read no block yet
        assert second.find_line(0x204) is not None
        assert not second.damage.damaged
        assert second.find_line(0x104) is not None  # the damaged block, parsed by the first file
        assert second.damage.counts == {DamageKind.BAD_LINE: 1}
        assert second.damage.examples[0].line_number == 4


def test_a_changed_sym_file_is_parsed_again(tmp_path: Path, cache: IndexCache, parses: list[int]) -> None:
    sym = _symbols(tmp_path)
    _kept(sym, cache)
    with SymbolFile.open(sym, cache=cache) as sf:
        assert sf.find_line(0x110) is not None
    parsed = len(parses)
    text = sym.read_text(encoding="utf-8").replace("100 20 3 0", "100 20 7 0")
    sym.write_text(text, encoding="utf-8")  # the same size and first line, another time
    with SymbolFile.open(sym, cache=cache) as sf:
        line = sf.find_line(0x110)
        assert line is not None and line.line == 7
    assert len(parses) == parsed + 1


def test_a_sym_file_changed_a_moment_ago_is_not_shared(
    tmp_path: Path, cache: IndexCache, parses: list[int]
) -> None:
    sym = _symbols(tmp_path)  # just written
    SymbolFile.open(sym, cache=cache).close()
    _age(_entry(cache))  # the index settles, not the .sym file
    for _ in range(2):
        with SymbolFile.open(sym, cache=cache) as sf:
            assert sf.find_line(0x110) is not None
    assert len(parses) == 2  # a change within its clock tick would not show: each reads it


def test_kept_indexes_are_bounded(tmp_path: Path, cache: IndexCache, monkeypatch: pytest.MonkeyPatch) -> None:
    kept = cache_module._KeptImages()
    monkeypatch.setattr(cache_module, "_KEPT", kept)
    syms = [
        SymBuilder(debug_id=f"{n}0", name=f"lib{n}.so").public(0x10, f"p{n}").write(tmp_path / f"{n}.sym")
        for n in range(6)
    ]
    for sym in syms:
        SymbolFile.open(sym, cache=cache).close()
    entries = sorted(Path(str(cache.directory)).glob("*.symidx"))
    _age(*entries)
    monkeypatch.setattr(cache_module, "KEEP_TOTAL_BYTES", 3 * max(e.stat().st_size for e in entries))
    for sym in syms:
        SymbolFile.open(sym, cache=cache).close()
    assert len(kept) == 3
    assert kept.bytes <= cache_module.KEEP_TOTAL_BYTES


# ---- the object listings of symbol folders --------------------------------------------------------


@pytest.fixture
def fake_objects(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Objects are files starting with the ELF magic, then their debug id (no `symbolic` needed);
    returns the list of folder walks."""
    walks: list[str] = []
    walk = sources._walk

    def counting_walk(root: str, cancel: object) -> object:
        walks.append(root)
        return walk(root, cancel)  # type: ignore[arg-type]

    def identity(
        self: ObjectSources, path: str, *, quiet: bool = False, st: object = None
    ) -> list[tuple[str, str]]:
        with open(path, "rb") as f:
            return [(f.read()[4:].decode(), "")]

    monkeypatch.setattr(sources, "_walk", counting_walk)
    monkeypatch.setattr(ObjectSources, "identity", identity)
    return walks


def _object(path: Path, debug_id: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x7fELF" + debug_id.encode())
    return path


def _found(folder: Path, debug_id: str, cache_dir: Path) -> list[str]:
    """What a dump's fresh object sources find in the folder for a module with this debug id."""
    objects = ObjectSources([folder], local_modules=False, cache_dir=cache_dir)
    found, _ = objects.find_local(Module("/x/libobj.so", "", "libobj.so", debug_id))
    return [os.path.relpath(f.path, folder) for f in found]


def test_a_symbol_folder_is_walked_once_while_it_does_not_change(
    tmp_path: Path, fake_objects: list[str]
) -> None:
    folder, cache_dir = tmp_path / "objects", tmp_path / "cache"
    _object(folder / "a" / "libobj.so", "AAAA0")
    _object(folder / "b" / "other.so", "BBBB0")
    _age_tree(folder)
    assert _found(folder, "AAAA0", cache_dir) == ["a/libobj.so"]
    assert _found(folder, "BBBB0", cache_dir) == ["b/other.so"]
    assert _found(folder, "AAAA0", cache_dir) == ["a/libobj.so"]
    assert len(fake_objects) == 1


def test_a_changed_symbol_folder_is_noticed(tmp_path: Path, fake_objects: list[str]) -> None:
    folder, cache_dir = tmp_path / "objects", tmp_path / "cache"
    _object(folder / "a" / "libobj.so", "AAAA0")
    _age_tree(folder)
    assert _found(folder, "CCCC0", cache_dir) == []
    # a file added in a sub-folder: that folder's modification time changes
    _object(folder / "a" / "new.so", "CCCC0")
    assert _found(folder, "CCCC0", cache_dir) == ["a/new.so"]
    assert len(fake_objects) == 2
    # changed a moment ago: not kept (a further change in the same clock tick would not show)
    assert _found(folder, "CCCC0", cache_dir) == ["a/new.so"]
    assert len(fake_objects) == 3
    _age_tree(folder)
    assert _found(folder, "CCCC0", cache_dir) == ["a/new.so"]
    assert _found(folder, "CCCC0", cache_dir) == ["a/new.so"]
    assert len(fake_objects) == 4
    # a file removed, a folder added
    (folder / "a" / "new.so").unlink()
    assert _found(folder, "CCCC0", cache_dir) == []
    _object(folder / "c" / "d" / "late.so", "DDDD0")
    assert _found(folder, "DDDD0", cache_dir) == ["c/d/late.so"]
    # an object rewritten in place (no folder changes): its size and modification time say so
    _age_tree(folder)
    assert _found(folder, "AAAA0", cache_dir) == ["a/libobj.so"]
    walks = len(fake_objects)
    _object(folder / "a" / "libobj.so", "EEEE00")
    _age(folder / "a" / "libobj.so", by_ns=2 * HOUR_AGO_NS)  # (rewriting a file leaves its folder's time)
    assert _found(folder, "AAAA0", cache_dir) == []
    assert _found(folder, "EEEE00", cache_dir) == ["a/libobj.so"]
    assert len(fake_objects) > walks


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="bare names are looked for on Linux only")
def test_one_file_in_two_library_folders_is_read_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = tmp_path / "usr" / "lib"
    _object(real / "libdup.so.1", "DDDD0")
    (tmp_path / "lib").symlink_to(real)  # merged /usr
    read: list[str] = []

    def identity(
        self: ObjectSources, path: str, *, quiet: bool = False, st: object = None
    ) -> list[tuple[str, str]]:
        read.append(path)
        return [("DDDD0", "")]

    monkeypatch.setattr(ObjectSources, "identity", identity)
    objects = ObjectSources(
        [],
        local_modules=True,
        cache_dir=tmp_path / "cache",
        library_dirs=(str(tmp_path / "lib"), str(real), str(tmp_path / "missing")),
        debug_root=str(tmp_path / "debug"),
    )
    found, looked = objects.find_local(Module("libdup.so.1", "", "libdup.so.1", "DDDD0"), on_machine=True)
    assert [f.path for f in found] == [str(tmp_path / "lib" / "libdup.so.1")]
    assert read == [str(tmp_path / "lib" / "libdup.so.1")]
    assert looked == [str(tmp_path / d / "libdup.so.1") for d in ("lib", "usr/lib", "missing")]


# ---- symbol paths ----------------------------------------------------------------------------------


def test_a_symbol_folder_made_after_the_supplier_is_searched(tmp_path: Path) -> None:
    later = tmp_path / "later"
    supplier = SymbolSupplier([later], local_modules=False)
    assert [p.reason for p in supplier.problems] == ["does not exist"]
    module = Module("/x/libfoo.so", "", "libfoo.so", "ABC0")
    assert supplier.locate(module).path is None
    SymBuilder(debug_id="ABC0", name="libfoo.so").public(0x10, "foo").write_to_store(later, "libfoo.so")
    assert supplier.locate(module).path == str(later / "libfoo.so" / "ABC0" / "libfoo.so.sym")


@pytest.mark.parametrize(
    "text",
    ["", ".", "./", "a", "a/", "a//b", "a/./b", "./a/../b", "/", "//", "///", "//a//b/", "///a", "/a/./"],
)
def test_symbol_paths_are_spelled_as_pathlib_spells_them(text: str) -> None:
    assert path_text(text) == str(Path(text))
    assert path_text(Path(text)) == str(Path(text))


# ---- where a module's file is, from one dump to the next -----------------------------------------


@pytest.fixture
def searches(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The debug ids whose files a supplier looked for in its symbol paths (not answered from memory)."""
    seen: list[str] = []
    locate = SymbolSupplier._locate

    def counting(self: SymbolSupplier, module: Module, cancel: object) -> object:
        seen.append(module.debug_id)
        return locate(self, module, cancel)  # type: ignore[arg-type]

    monkeypatch.setattr(SymbolSupplier, "_locate", counting)
    return seen


def _located(root: Path, module: Module) -> str | None:
    """Where a dump's fresh supplier finds the module's file."""
    return SymbolSupplier([root], local_modules=False).locate(module).path


def test_a_module_is_looked_for_twice_at_most_while_its_symbol_paths_do_not_change(
    tmp_path: Path, searches: list[str]
) -> None:
    # the answer is kept from the second asking on (a question asked once never pays for the
    # witnesses of what its answer depended on: `KeptAnswers`)
    store = tmp_path / "store"
    found = SymBuilder(debug_id="AAAA0", name="libfound.so").public(0x10, "f").write_to_store(store)
    _age_tree(store)
    present, absent = (
        Module("/x/libfound.so", "", "libfound.so", "AAAA0"),
        Module("/x/libnot.so", "", "libnot.so", "BBBB0"),
    )
    for _ in range(4):
        assert (_located(store, present), _located(store, absent)) == (str(found), None)
    assert searches == ["AAAA0", "BBBB0", "AAAA0", "BBBB0"]
    # another supplier (other options) asks for itself
    other_options = SymbolSupplier([store], local_modules=False, code_id_fallback=False)
    for _ in range(3):
        assert other_options.locate(absent).path is None
    assert searches == ["AAAA0", "BBBB0", "AAAA0", "BBBB0", "BBBB0", "BBBB0"]


def test_a_change_in_the_symbol_paths_is_noticed(tmp_path: Path, searches: list[str]) -> None:
    store = tmp_path / "store"
    SymBuilder(debug_id="AAAA0", name="libold.so").public(0x10, "f").write_to_store(store)
    _age_tree(store)
    module = Module("/x/libnew.so", "", "libnew.so", "CCCC0")
    assert _located(store, module) is None
    # its file added where its folder did not exist: the store's own time changes
    added = SymBuilder(debug_id="CCCC0", name="libnew.so").public(0x10, "f").write_to_store(store)
    assert _located(store, module) == str(added)
    # removed again, its folders left: the folder holding it changes
    _age_tree(store)
    assert _located(store, module) == str(added)
    added.unlink()
    assert _located(store, module) is None
    # added under a folder that existed, named by another debug id of the same module
    _age_tree(store)
    other = Module("/x/libnew.so", "", "libnew.so", "DDDD0")
    assert _located(store, other) is None
    later = SymBuilder(debug_id="DDDD0", name="libnew.so").public(0x10, "f").write_to_store(store)
    assert _located(store, other) == str(later)
    # a symbol path that does not exist yet, then does
    missing = tmp_path / "later"
    _age(tmp_path)
    assert SymbolSupplier([missing], local_modules=False).locate(other).path is None
    SymBuilder(debug_id="DDDD0", name="libnew.so").public(0x10, "f").write_to_store(missing)
    assert SymbolSupplier([missing], local_modules=False).locate(other).path is not None


def test_a_rewritten_single_sym_file_is_read_again(tmp_path: Path) -> None:
    sym = SymBuilder(debug_id="AAAA0", name="libone.so").public(0x10, "f").write(tmp_path / "one.sym")
    _age(sym, tmp_path)
    module = Module("/x/libone.so", "", "libone.so", "AAAA0")
    assert _located(sym, module) == str(sym)
    SymBuilder(debug_id="BBBB0", name="libone.so").public(0x10, "f").write(sym)  # another build's
    assert _located(sym, module) is None
    assert _located(sym, Module("/x/libone.so", "", "libone.so", "BBBB0")) == str(sym)


def test_a_symbol_folder_changed_a_moment_ago_is_looked_at_again(tmp_path: Path, searches: list[str]) -> None:
    store = tmp_path / "store"
    store.mkdir()
    module = Module("/x/libnew.so", "", "libnew.so", "CCCC0")
    for _ in range(2):
        assert _located(store, module) is None
    assert searches == ["CCCC0", "CCCC0"]  # a change within its clock tick would not show


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="bare names are looked for on Linux only")
def test_a_module_file_appearing_on_this_machine_is_noticed(tmp_path: Path, fake_objects: list[str]) -> None:
    libs = tmp_path / "lib"
    libs.mkdir()
    _age(libs, tmp_path)

    def found() -> list[str]:
        objects = ObjectSources(
            [],
            local_modules=True,
            cache_dir=tmp_path / "cache",
            library_dirs=(str(libs),),
            debug_root=str(tmp_path / "debug"),
        )
        return [
            f.path
            for f in objects.find_local(Module("libnew.so.1", "", "libnew.so.1", "EEEE0"), on_machine=True)[0]
        ]

    assert found() == []
    assert found() == []
    library = _object(libs / "libnew.so.1", "EEEE0")
    assert found() == [str(library)]
    _age(library, libs)
    assert found() == [str(library)]
    _object(library, "FFFF00")  # replaced by another build (the same folder)
    _age(library, by_ns=2 * HOUR_AGO_NS)
    assert found() == []


def test_a_sym_file_opened_again_is_known_by_its_path_while_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    resolved: list[str] = []
    realpath = os.path.realpath

    def counting(path: str) -> str:
        resolved.append(path)
        return realpath(path)

    monkeypatch.setattr(os.path, "realpath", counting)
    sym = _symbols(tmp_path)
    _age(sym)
    for _ in range(2):
        with SymbolFile.open(sym) as sf:
            assert sf.module is not None and sf.module.debug_id == "ABCD0"
    assert len(resolved) == 1
    SymBuilder(debug_id="EEEE0", name="libkept.so").public(0x10, "p").write(sym)  # another build's
    _age(sym, by_ns=2 * HOUR_AGO_NS)
    with SymbolFile.open(sym) as sf:
        assert sf.module is not None and sf.module.debug_id == "EEEE0"
    assert len(resolved) == 2


def test_a_missing_file_is_witnessed_by_the_folder_that_would_hold_it(tmp_path: Path) -> None:
    store = tmp_path / "store"
    (store / "a").mkdir(parents=True)
    _age(store / "a", store)
    missing = str(store / "a" / "b" / "c.sym")
    witness = absence_witness(missing)
    assert witness is not None and witness[0] == str(store / "a")
    assert witnesses_hold((witness,))
    (store / "a" / "b").mkdir()  # the next step on the way appears: the folder changed
    assert not witnesses_hold((witness,))
    _age(store / "a")
    assert absence_witness(str(store / "a" / "x")) is not None
    assert absence_witness(str(store / "a" / "b")) is None  # it exists
    (store / "a" / "link").symlink_to(store / "nowhere")  # dangling: it could start to resolve
    assert absence_witness(str(store / "a" / "link" / "c.sym")) is None
    (store / "a" / "file").write_bytes(b"")  # a file where a folder would be
    _age(store / "a", store / "a" / "file")
    assert absence_witness(str(store / "a" / "file" / "c.sym")) is None
    assert absence_witness(str(tmp_path / "new")) is None  # its folder changed a moment ago


def test_a_file_is_witnessed_by_its_state(tmp_path: Path) -> None:
    path = tmp_path / "f.sym"
    path.write_bytes(b"one")
    assert present_witness(str(path)) is None  # written a moment ago
    _age(path)
    witness = present_witness(str(path))
    assert witness is not None and witnesses_hold((witness,))
    path.write_bytes(b"two")
    _age(path)  # rewritten, an hour ago again: the same size, another time
    assert not witnesses_hold((witness,))
    path.unlink()
    assert not witnesses_hold((witness,)) and present_witness(str(path)) is None


def test_kept_answers_are_kept_from_their_second_asking_while_their_witnesses_hold(tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    _age(folder)
    kept = cache_module.KeptAnswers(limit=2)
    witness = present_witness(str(folder))
    assert witness is not None
    assert not kept.asked_before("q") and kept.asked_before("q")  # the first asking is remembered
    kept.keep("q", "answer", (witness,))
    assert kept.get("q") == "answer" and kept.asked_before("q")
    (folder / "new").write_text("x")  # what the answer depended on changed
    assert kept.get("q") is None
    # at most `limit` answers: the oldest goes first
    for key in ("a", "b", "c"):
        kept.keep(key, key.upper(), ())
    assert (kept.get("a"), kept.get("b"), kept.get("c")) == (None, "B", "C")
