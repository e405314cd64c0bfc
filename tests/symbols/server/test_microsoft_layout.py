"""A real PE and its PDB from a loopback server in Microsoft's symbol-server layout.

The server holds `crashlab.exe/<TIMESTAMP><SIZE>/crashlab.exe` and
`crashlab.pdb/<GUID><age>/crashlab.pdb` (`tests/fixtures/windows-crashes`: clang's MinGW
target, lld with `--pdb`, crashed under wine). Two dumps of each crash:

* as wine's dbghelp wrote it, without CodeView records: the module names no PDB, so the PE is
  asked for by its code id, its own CodeView record names the PDB and its debug id, and the
  PDB is asked for next (the exe → PDB step);
* the same dump with the module's CodeView record added (the record the PE itself holds, as
  Windows' dbghelp writes it): the PDB is asked for by the dump's debug id directly.

Either way the walk must equal the walk with the same two files in a local symbol path, and a
second walk must make no request.
"""

from __future__ import annotations

import json
import shutil
import struct
import uuid
from pathlib import Path

import pytest

from inspector.core.process import ProcessOptions, process
from inspector.core.report.json_report import render_json
from inspector.core.symbols import SymbolServer, SymbolServerOptions
from tests.symbols.server.http_server import SymbolHttpServer

pytest.importorskip("symbolic", reason="reading objects needs the symbolic package")

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO / "tests" / "fixtures" / "windows-crashes"
CASES = [("O1", "bad_read"), ("O2", "worker_fault")]


def _codeview(level: str) -> tuple[str, str, str]:
    from inspector.core.symbols.objects.reading import pe_codeview

    found = pe_codeview(str(FIXTURES / level / "crashlab.exe"))
    assert found is not None, "the fixture's PE carries a CodeView record (lld --pdb)"
    return found.pdb_name, found.debug_id, found.code_id


def _with_codeview(dump: Path, out: Path, level: str) -> None:
    """A copy of `dump` whose crashlab.exe module has the PE's CodeView record (appended to the file)."""
    pdb_name, debug_id, _ = _codeview(level)
    data = bytearray(dump.read_bytes())
    streams, directory = struct.unpack_from("<II", data, 8)
    modules_at = next(
        rva
        for kind, _size, rva in (struct.unpack_from("<III", data, directory + 12 * i) for i in range(streams))
        if kind == 4  # ModuleListStream
    )
    record = (
        b"RSDS"
        + uuid.UUID(hex=debug_id[:32]).bytes_le
        + struct.pack("<I", int(debug_id[32:], 16))
        + pdb_name.encode()
        + b"\0"
    )
    (count,) = struct.unpack_from("<I", data, modules_at)
    for i in range(count):
        module = modules_at + 4 + 108 * i
        (name_rva,) = struct.unpack_from("<I", data, module + 20)
        (length,) = struct.unpack_from("<I", data, name_rva)
        name = data[name_rva + 4 : name_rva + 4 + length].decode("utf-16-le")
        if name.lower().endswith("crashlab.exe"):
            struct.pack_into("<II", data, module + 76, len(record), len(data))
            data += record
            out.write_bytes(bytes(data))
            return
    raise AssertionError("no crashlab.exe module in the dump")


@pytest.fixture(scope="module")
def wine_dll_symbols(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The `.sym` files of wine's DLLs (not of crashlab: its symbols must come from the PE and PDB)."""
    out = tmp_path_factory.mktemp("wine-dlls")
    for folder in (FIXTURES / "symbols").iterdir():
        if folder.name != "crashlab.pdb":
            shutil.copytree(folder, out / folder.name)
    return out


def _walk(
    dump: Path, paths: tuple[Path, ...], index: Path, servers: SymbolServerOptions | None = None
) -> dict:
    options = ProcessOptions(
        symbol_paths=paths, symbols_cache=index, symbol_servers=servers, local_modules=False
    )
    return json.loads(render_json(process(dump, options)))


def _frames(report: dict) -> list[tuple]:
    keys = ("module", "module_offset", "trust", "function", "function_offset", "file", "line")
    return [tuple(f.get(k) for k in keys) for t in report["threads"] for f in t["frames"]]


def _crashlab(report: dict) -> dict:
    return next(m for m in report["modules"] if m["filename"] == "crashlab.exe")


@pytest.mark.parametrize("codeview", [False, True], ids=["wine-dump-exe-then-pdb", "dump-with-codeview"])
@pytest.mark.parametrize(("level", "name"), CASES, ids=[f"{lv}-{n}" for lv, n in CASES])
def test_pe_and_pdb_from_a_microsoft_symbol_server_equal_the_local_walk(
    level: str, name: str, codeview: bool, wine_dll_symbols: Path, tmp_path: Path
) -> None:
    pdb_name, debug_id, code_id = _codeview(level)
    tree = tmp_path / "server"
    (tree / "crashlab.exe" / code_id).mkdir(parents=True)
    shutil.copyfile(FIXTURES / level / "crashlab.exe", tree / "crashlab.exe" / code_id / "crashlab.exe")
    (tree / pdb_name / debug_id).mkdir(parents=True)
    shutil.copyfile(FIXTURES / level / "crashlab.pdb", tree / pdb_name / debug_id / pdb_name)
    dump = FIXTURES / level / f"{name}.dmp"
    if codeview:
        _with_codeview(dump, tmp_path / f"{name}.dmp", level)
        dump = tmp_path / f"{name}.dmp"

    local = _walk(dump, (FIXTURES / level, wine_dll_symbols), tmp_path / "local-index")
    # the PDB gave the names: crashlab's own functions, with files and lines
    crashing = local["threads"][local["crash_info"]["crashing_thread"]]["frames"]
    own = [
        f for f in crashing if f.get("module") == "crashlab.exe" and f.get("file", "").endswith("crashlab.c")
    ]
    assert own, crashing[:3]
    assert _crashlab(local)["debug_file"] == pdb_name and _crashlab(local)["debug_id"] == debug_id

    server = SymbolHttpServer(roots=(tree,))
    try:
        options = SymbolServerOptions(servers=(SymbolServer(server.url, None),), cache_dir=tmp_path / "dl")
        walks = []
        for _ in range(2):
            server.reset()
            report = _walk(dump, (wine_dll_symbols,), tmp_path / "index", options)
            walks.append((report, list(server.paths)))
    finally:
        server.close()
    (first, first_requests), (second, second_requests) = walks
    assert _frames(first) == _frames(local)
    assert _frames(second) == _frames(local)
    pe = f"/symbols/crashlab.exe/{code_id}/crashlab.exe"
    pdb = f"/symbols/{pdb_name}/{debug_id}/{pdb_name}"
    assert pe in first_requests and pdb in first_requests
    if not codeview:  # the PDB's name and id were only known once the PE was read
        assert first_requests.index(pe) < first_requests.index(pdb)
    assert second_requests == []
    for report in (first, second):
        module = _crashlab(report)
        assert module["loaded_symbols"] and module["symbol_url"].startswith(server.origin)
        assert module["debug_file"] == pdb_name and module["debug_id"] == debug_id
