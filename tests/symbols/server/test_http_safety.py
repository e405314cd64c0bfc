"""Hostile module names from a dump must never make a download write outside the cache folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.core.symbols import DownloadState, IndexCache, ServerSymbolSupplier, unsafe_component_reason
from inspector.core.symbols.download_cache import DownloadCache, SymbolLookup, UnsafePath
from tests.symbols.server.http_server import Module, SymbolHttpServer, options_for

GOOD_ID = "C45AC8E94E82B725B3C5363770E51DB30"

HOSTILE_NAMES = {
    "dot-dot": "..",
    "dot": ".",
    "slash": "a/b",
    "backslash": "a\\b",
    "NUL": "evil\x00.pdb",
    "newline": "evil\n.pdb",
    "escape": "evil\x1b[31m.pdb",
    "delete": "evil\x7f.pdb",
    "too long": "a" * 300 + ".pdb",
    "drive letter": "C:evil.pdb",
    "alternate stream": "evil.pdb:stream",
    "reserved CON": "CON",
    "reserved with extension": "nul.txt",
    "reserved COM1": "com1.pdb",
    "reserved LPT9 with space": "LPT9 .sym",
    "trailing dot": "evil.",
    "trailing space": "evil ",
    "wildcard": "ev*l.pdb",
    "question mark": "ev?l.pdb",
    "lone surrogate": "evil\udc80.pdb",
    "cache folder": ".partial",
    "negative folder": ".NEGATIVE",
}


@pytest.mark.parametrize("name", HOSTILE_NAMES.values(), ids=HOSTILE_NAMES.keys())
def test_hostile_component_is_rejected(name: str) -> None:
    assert unsafe_component_reason(name) is not None


@pytest.mark.parametrize(
    "name", ["libc.so.6", "xul.pdb", "My App.pdb", "ld-linux-x86-64.so.2", "日本語.pdb", GOOD_ID, "a" * 200]
)
def test_ordinary_names_are_accepted(name: str) -> None:
    assert unsafe_component_reason(name) is None


def test_the_cache_refuses_an_unsafe_lookup(tmp_path: Path) -> None:
    cache = DownloadCache(tmp_path / "cache")
    with pytest.raises(UnsafePath), cache.writer(SymbolLookup(("..", GOOD_ID, "x.sym"), "debug id")):
        pass
    assert cache.find(SymbolLookup(("..", "..", "etc"), "debug id")) is None


def test_a_symlink_out_of_the_cache_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    cache_root = tmp_path / "cache"
    cache_root.mkdir()
    (cache_root / "linked.so").symlink_to(outside, target_is_directory=True)
    cache = DownloadCache(cache_root)
    with (
        pytest.raises(UnsafePath),
        cache.writer(SymbolLookup(("linked.so", GOOD_ID, "linked.so.sym"), "debug id")),
    ):
        pass
    assert list(outside.iterdir()) == []


# (debug file, debug id, code file, code id): every field the dump controls
HOSTILE_MODULES = {
    "debug file ..": ("..", GOOD_ID, "", ""),
    "debug id with ../": ("evil.pdb", "../../../../escaped", "", ""),
    "debug id absolute": ("evil.pdb", "/tmp/escaped", "", ""),
    "debug id backslashes": ("evil.pdb", "..\\..\\escaped", "", ""),
    "debug file NUL": ("evil\x00.pdb", GOOD_ID, "", ""),
    "debug file control": ("evil\r\n.pdb", GOOD_ID, "", ""),
    "debug file long": ("e" * 5000, GOOD_ID, "", ""),
    "debug file drive": ("C:", GOOD_ID, "", ""),
    "debug file reserved": ("AUX.pdb", GOOD_ID, "", ""),
    "code file ..": ("", "", "..", "ABCDEF"),
    "code id with ../": ("", "", "evil.dll", "../../escaped"),
    "code id drive": ("", "", "evil.dll", "C:\\escaped"),
    "id with NUL": ("evil.pdb", "AB\x00CD", "", ""),
}


@pytest.mark.parametrize("fields", HOSTILE_MODULES.values(), ids=HOSTILE_MODULES.keys())
def test_a_hostile_module_writes_nothing_outside_the_cache(
    tmp_path: Path, server: SymbolHttpServer, fields: tuple[str, str, str, str]
) -> None:
    debug_file, debug_id, code_file, code_id = fields
    server.behaviour.body = b"MODULE Linux x86_64 0 evil\nFUNC 0 10 0 evil\n"  # the server answers anything
    workdir = tmp_path / "work"
    cache = workdir / "cache"
    workdir.mkdir()
    before = set(tmp_path.rglob("*"))
    module = Module(code_file, code_id, debug_file, debug_id)
    with ServerSymbolSupplier((), options_for(server, cache=cache), cache=IndexCache(None)) as supplier:
        supplier.prefetch([module])
        result = supplier.load(module)
    assert result.download is not None
    assert result.download.state is DownloadState.FAILED
    assert "unsafe file name" in (result.download.reason or "")
    assert server.requests == [], "nothing is asked for a name that could not be stored"
    created = set(tmp_path.rglob("*")) - before
    assert all(p == cache or cache in p.parents for p in created), created
    assert not any(p.is_file() and p.suffix != "" and ".negative" not in p.parts for p in created), created


def test_a_hostile_debug_file_with_a_usable_code_id_still_downloads_safely(
    tmp_path: Path, server: SymbolHttpServer
) -> None:
    server.behaviour.body = b"MODULE Linux x86_64 0 good\nFUNC 0 10 0 good\n"
    module = Module("/usr/lib/good.so", "ab12", "..", GOOD_ID)
    cache = tmp_path / "cache"
    with ServerSymbolSupplier((), options_for(server, cache=cache), cache=IndexCache(None)) as supplier:
        result = supplier.load(module)
        assert result.found
    assert server.paths == ["/symbols/good.so/AB12/good.so.sym"]
    assert (cache / "good.so" / "AB12" / "good.so.sym").is_file()


def test_names_with_url_syntax_stay_names(tmp_path: Path, server: SymbolHttpServer) -> None:
    server.behaviour.body = b"MODULE Linux x86_64 0 x\n"
    module = Module("", "", "odd#name%2e;x.so", GOOD_ID)
    with ServerSymbolSupplier(
        (), options_for(server, cache=tmp_path / "c"), cache=IndexCache(None)
    ) as supplier:
        supplier.load(module)
    (request,) = server.requests
    assert request.path == f"/symbols/odd#name%2e;x.so/{GOOD_ID}/odd#name%2e;x.so.sym"
