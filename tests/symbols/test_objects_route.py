"""Symbols from binaries and debug files: the same walk as with `.sym` files made by dump_syms.

Every own crash of `tests/fixtures/crashes` is walked twice: with the `.sym` files (made by
Mozilla dump_syms 2.3.5 from our binaries and the system libraries) and with the objects only
(our binaries in `<case>/binaries`, the system libraries from this machine when their build ids
are those of the dump, with libc's symbol table from Debian's debug file as make-crashes gave it
to dump_syms). Every frame of every thread is compared: module, offset, trust, function, offset
in the function, file, line and the inline frames.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from inspector.core.process import ProcessOptions, process
from inspector.core.report.human import render_human
from inspector.core.report.json_report import render_json
from tests.symbols.server.http_server import SymbolHttpServer

pytest.importorskip("symbolic", reason="reading objects needs the symbolic package")

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "crashes"
SYSTEM_SYMBOLS = FIXTURES / "system-symbols"
CASES = ("fp_less_deep", "lib_callback", "libc_abort", "multithread", "cxx_terminate")


def _system_modules() -> list[tuple[str, str, str, Path]]:
    rows = []
    for line in (FIXTURES / "system-modules.tsv").read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        name, build_id, debug_id, path = line.split("\t")
        rows.append((name, build_id, debug_id, Path(path)))
    return rows


def _build_id(path: Path) -> str | None:
    from inspector.core.symbols.objects.reading import read_objects

    try:
        return next((info.code_id for info, _ in read_objects(path)), None)
    except Exception:
        return None


@pytest.fixture(scope="module")
def system_objects(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(a folder with this machine's system libraries the dumps used, a folder of the .sym files of
    those that are not the dumps' ones here). libc's symbol table comes from its debug file with
    the DWARF stripped, as make-crashes gave it to dump_syms."""
    objects = tmp_path_factory.mktemp("system-objects")
    fallback = tmp_path_factory.mktemp("system-sym-fallback")
    for name, build_id, debug_id, path in _system_modules():
        if path.is_file() and _build_id(path) == build_id:
            shutil.copyfile(path, objects / name)
            debug = Path("/usr/lib/debug/.build-id") / build_id[:2] / f"{build_id[2:]}.debug"
            if name == "libc.so.6" and debug.is_file() and shutil.which("objcopy"):
                subprocess.run(
                    ["objcopy", "--strip-debug", str(debug), str(objects / f"{name}.symtab")], check=True
                )
        else:  # not this machine's library: both routes use the fixture's .sym for it
            src = SYSTEM_SYMBOLS / name / debug_id
            shutil.copytree(src, fallback / name / debug_id)
    return objects, fallback


def _walk(dump: Path, paths: list[Path], cache: Path, *, local: bool = False) -> dict:
    options = ProcessOptions(symbol_paths=tuple(paths), symbols_cache=cache, local_modules=local)
    return json.loads(render_json(process(dump, options)))


def _frame_key(frame: dict) -> tuple:
    inlines = tuple((i.get("function"), i.get("file"), i.get("line")) for i in frame.get("inlines") or ())
    return (
        frame.get("module"),
        frame.get("module_offset"),
        frame.get("trust"),
        frame.get("function"),
        frame.get("function_offset"),
        frame.get("file"),
        frame.get("line"),
        inlines,
    )


def _frames(report: dict) -> list[tuple]:
    return [_frame_key(f) for thread in report["threads"] for f in thread["frames"]]


@pytest.mark.parametrize("case", CASES)
def test_objects_give_the_frames_of_the_sym_files(
    case: str, system_objects: tuple[Path, Path], tmp_path: Path
) -> None:
    objects, fallback = system_objects
    dump = FIXTURES / case / f"{case}.dmp"
    by_sym = _walk(dump, [FIXTURES / case / "symbols", SYSTEM_SYMBOLS], tmp_path / "a")
    by_objects = _walk(dump, [FIXTURES / case / "binaries", objects, fallback], tmp_path / "b")
    expected, got = _frames(by_sym), _frames(by_objects)
    assert len(expected) == len(got)
    equal = sum(1 for x, y in zip(expected, got, strict=True) if x == y)
    differing = [(x, y) for x, y in zip(expected, got, strict=True) if x != y]
    assert equal / len(expected) >= 0.99, differing[:5]
    # the inline frames (names, files, lines) are equal in every frame
    assert [x[7] for x in expected] == [y[7] for y in got]
    loaded = {m["filename"] for m in by_objects["modules"] if m.get("loaded_symbols")}
    assert loaded == {m["filename"] for m in by_sym["modules"] if m.get("loaded_symbols")}
    assert by_objects["inspector_problems"] == by_sym["inspector_problems"]


def test_the_second_walk_opens_the_cached_conversion(tmp_path: Path) -> None:
    from inspector.core.symbols import IndexCache, SymbolSupplier
    from tests.symbols.server.http_server import Module

    module = Module(
        "/tmp/crash-inspector-crashes/build/libc_abort/ledger",
        "2697ac16c7d61110cd76cd9a3c1ab156eec6e066",
        "ledger",
        "16AC9726D6C71011CD76CD9A3C1AB1560",
    )
    binaries = [FIXTURES / "libc_abort" / "binaries"]
    first = SymbolSupplier(binaries, cache=IndexCache(tmp_path), local_modules=False).load(module)
    assert first.symbol_file is not None and first.symbol_file.index_source.startswith("built")
    assert first.source == "DWARF in the binary (symbol path)"
    assert first.cfi_sources == (f".eh_frame of {binaries[0] / 'ledger'}",)
    converted = Path(first.symbol_file.path)
    stamp = converted.stat().st_mtime_ns
    # the records and the CFI were written to files of their own first: none is left behind
    assert sorted(p.name for p in converted.parent.iterdir()) == [converted.name]
    second = SymbolSupplier(binaries, cache=IndexCache(tmp_path), local_modules=False).load(module)
    assert second.symbol_file is not None
    assert second.symbol_file.path == str(converted) and converted.stat().st_mtime_ns == stamp
    assert second.symbol_file.index_source == "cache"
    first.symbol_file.close()
    second.symbol_file.close()


def test_a_binary_with_another_build_id_is_not_used(tmp_path: Path) -> None:
    """Matched by identity, never by name: `ledger` from another crash under the right name."""
    folder = tmp_path / "bins"
    folder.mkdir()
    shutil.copyfile(FIXTURES / "multithread" / "binaries" / "warehouse", folder / "ledger")
    report = _walk(FIXTURES / "libc_abort" / "libc_abort.dmp", [folder], tmp_path / "c")
    ledger = next(m for m in report["modules"] if m["filename"] == "ledger")
    assert ledger["missing_symbols"] and not ledger.get("loaded_symbols")


def test_debuginfod_on_loopback_equals_the_local_walk_and_is_asked_once(tmp_path: Path) -> None:
    from inspector.core.symbols import SymbolServer, SymbolServerOptions

    tree = tmp_path / "debuginfod"
    case = "lib_callback"
    for binary in (FIXTURES / case / "binaries").iterdir():
        build_id = _build_id(binary)
        assert build_id is not None
        target = tree / "buildid" / build_id / "executable"
        target.parent.mkdir(parents=True)
        shutil.copyfile(binary, target)
    server = SymbolHttpServer(roots=(tree,))
    try:
        dump = FIXTURES / case / f"{case}.dmp"
        local = _walk(dump, [FIXTURES / case / "binaries", SYSTEM_SYMBOLS], tmp_path / "local")
        options = SymbolServerOptions(debuginfod=(SymbolServer(server.url, None),), cache_dir=tmp_path / "dl")
        walks = []
        traces: list[str] = []
        for _ in range(2):
            server.reset()
            state = process(
                dump,
                ProcessOptions(
                    symbol_paths=(SYSTEM_SYMBOLS,),
                    symbols_cache=tmp_path / "index",
                    symbol_servers=options,
                    local_modules=False,
                ),
            )
            walks.append((json.loads(render_json(state)), list(server.paths)))
            traces.append(render_human(state, trace=True))
    finally:
        server.close()
    # the trace names the download each CFI rule came from
    for trace in traces:
        assert f"(debuginfod {server.url}/buildid/" in trace
    (first, first_requests), (second, second_requests) = walks
    assert _frames(first) == _frames(local)
    assert _frames(second) == _frames(local)
    assert any(p.endswith("/executable") for p in first_requests)
    assert any(p.endswith("/debuginfo") for p in first_requests)  # asked first, not there
    assert second_requests == []
    urls = {m["filename"]: m.get("symbol_url") for m in second["modules"] if m.get("loaded_symbols")}
    assert urls["libinventory.so"] is not None and urls["libinventory.so"].startswith(server.origin)


def test_the_trace_says_where_each_cfi_rule_came_from(tmp_path: Path) -> None:
    """`--trace`: every STACK CFI step names the .sym file, or the unwind tables of which binary."""
    case = FIXTURES / "libc_abort"
    dump = case / f"{case.name}.dmp"
    ledger_sym = case / "symbols" / "ledger" / "16AC9726D6C71011CD76CD9A3C1AB1560" / "ledger.sym"
    libc_sym = SYSTEM_SYMBOLS / "libc.so.6" / "EC61AC938E5A39B16F9FBD350E3169A50" / "libc.so.6.sym"
    options = {"symbols_cache": tmp_path, "local_modules": False}
    for paths, ledger in (
        ((case / "binaries", SYSTEM_SYMBOLS), f".eh_frame of {case / 'binaries' / 'ledger'} (symbol path)"),
        ((case / "symbols", SYSTEM_SYMBOLS), f".sym file {ledger_sym}"),
    ):
        text = render_human(process(dump, ProcessOptions(symbol_paths=paths, **options)), trace=True)
        origins = [
            line.split(" - ", 1)[1] for line in text.splitlines() if line.strip().startswith("rules from - ")
        ]
        assert ledger in origins and f".sym file {libc_sym}" in origins, sorted(set(origins))
        # one label per STACK CFI attempt that found rules
        attempts = sum(1 for line in text.splitlines() if "STACK CFI block of" in line)
        assert attempts and len(origins) >= attempts


def test_module_files_on_this_machine_give_symbols_without_any_symbol_path(tmp_path: Path) -> None:
    libc = next(row for row in _system_modules() if row[0] == "libc.so.6")
    if not (libc[3].is_file() and _build_id(libc[3]) == libc[1]):
        pytest.skip("this machine's libc is not the one the crashes were made with")
    dump = FIXTURES / "libc_abort" / "libc_abort.dmp"
    report = _walk(dump, [], tmp_path / "c", local=True)
    modules = {m["filename"]: m for m in report["modules"]}
    assert modules["libc.so.6"]["loaded_symbols"]
    assert any(f.get("module") == "libc.so.6" and f.get("function") for f in report["threads"][0]["frames"])
    # nothing was asked for in a symbol path: a module without files here is not "missing"
    assert not modules["ledger"].get("loaded_symbols") and not modules["ledger"]["missing_symbols"]
    off = _walk(dump, [], tmp_path / "d", local=False)
    assert not any(m.get("loaded_symbols") for m in off["modules"])


def test_cxx_names_stay_mangled_in_the_conversion_and_are_demangled_when_looked_up(tmp_path: Path) -> None:
    """Demangling 342K names of a big C++ library costs more than the rest of a conversion; a walk
    shows a few hundred. The converted file keeps them mangled; a lookup returns dump_syms' spelling."""
    from inspector.core.symbols import IndexCache, SymbolSupplier
    from tests.symbols.server.http_server import Module

    sym = next((FIXTURES / "cxx_terminate" / "symbols").rglob("settings_loader.sym"))
    module_line = sym.read_text().split("\n", 1)[0].split()
    module = Module("/x/settings_loader", "", "settings_loader", module_line[3])
    supplier = SymbolSupplier([FIXTURES / "cxx_terminate" / "binaries"], cache=IndexCache(tmp_path))
    loaded = supplier.load(module)
    assert loaded.symbol_file is not None
    text = Path(loaded.symbol_file.path).read_text()
    assert "INFO NAMES mangled\n" in text and "\nFUNC " in text and " _ZN" in text
    # every FUNC of dump_syms' file: the same name by lookup
    compared = 0
    for line in sym.read_text().splitlines():
        if line.startswith("FUNC "):
            _, address, _size, _params, name = line.split(" ", 4)
            found = loaded.symbol_file.find_function(int(address, 16))
            assert found is not None and found.name == name, (line, found)
            compared += "::" in name
    assert compared >= 10  # C++ names, demangled on lookup
    loaded.symbol_file.close()
