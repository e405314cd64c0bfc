"""The listing of a symbol folder's objects kept on disk (`<cache>/scans/`), as a next process sees it.

A listing is named by a cheap checksum of the folder's path and holds the path and every
sub-folder's modification time; it is used only when all of them are as walked now (and its
objects unchanged), so a listing of another folder with the same name, one of an older format
or a damaged one costs a scan, never a wrong answer nor an exception.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from inspector.core.symbols.objects import sources
from inspector.core.symbols.objects.sources import SCAN_VERSION, ObjectSources
from tests.symbols.stand_ins import Module

HOUR_AGO_NS = 3600 * 10**9


def _age_tree(root: Path, by_ns: int) -> None:
    """Set modification times back: what a folder looks like once it has settled."""
    for path in [*root.rglob("*"), root]:
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - by_ns))


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Files whose identity was read: objects are files `\\x7fELF<debug id>` (no symbolic needed).
    Each call is a new process as far as the folders go (`_SCANS` starts empty)."""
    seen: list[str] = []

    def identity(
        self: ObjectSources, path: str, *, quiet: bool = False, st: object = None
    ) -> list[tuple[str, str]]:
        seen.append(path)
        with open(path, "rb") as f:
            return [(f.read()[4:].decode(), "")]

    monkeypatch.setattr(ObjectSources, "identity", identity)
    monkeypatch.setattr(sources, "_SCANS", {})
    return seen


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "objects"
    for name, debug_id in (("a/libobj.so", "AAAA0"), ("b/other.so", "BBBB0")):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(b"\x7fELF" + debug_id.encode())
    _age_tree(folder, by_ns=HOUR_AGO_NS)
    return folder


def _found(folder: Path, cache: Path, debug_id: str = "AAAA0") -> list[str]:
    sources._SCANS.clear()  # a new process: only the listing on disk is known
    objects = ObjectSources([folder], local_modules=False, cache_dir=cache)
    found, _ = objects.find_local(Module("/x/libobj.so", "", "libobj.so", debug_id))
    return [os.path.relpath(f.path, folder) for f in found]


def _listing(cache: Path) -> Path:
    [listing] = (cache / "scans").iterdir()
    return listing


def test_a_next_process_uses_the_listing_and_reads_no_object(tmp_path: Path, reads: list[str]) -> None:
    folder, cache = _folder(tmp_path), tmp_path / "cache"
    assert _found(folder, cache) == ["a/libobj.so"]
    assert len(reads) == 2
    assert _found(folder, cache) == ["a/libobj.so"]
    assert _found(folder, cache, "BBBB0") == ["b/other.so"]
    assert len(reads) == 2
    kept = json.loads(_listing(cache).read_text())
    assert (kept["version"], kept["root"]) == (SCAN_VERSION, str(folder))
    assert [folder_time[0] for folder_time in kept["folders"]] == [
        str(folder),
        *(str(folder / s) for s in "ba"),
    ]


def test_a_listing_of_another_folder_under_the_same_name_is_not_used(
    tmp_path: Path, reads: list[str]
) -> None:
    folder, cache = _folder(tmp_path), tmp_path / "cache"
    assert _found(folder, cache) == ["a/libobj.so"]
    listing = _listing(cache)
    kept = json.loads(listing.read_text())
    listing.write_text(json.dumps({**kept, "root": str(tmp_path / "elsewhere")}))  # a checksum collision
    assert _found(folder, cache) == ["a/libobj.so"]
    assert len(reads) == 4  # scanned again, and the listing is its own again
    assert json.loads(listing.read_text())["root"] == str(folder)


def test_a_listing_whose_folders_changed_is_not_used(tmp_path: Path, reads: list[str]) -> None:
    folder, cache = _folder(tmp_path), tmp_path / "cache"
    assert _found(folder, cache) == ["a/libobj.so"]
    (folder / "a" / "libnew.so").write_bytes(b"\x7fELFCCCC0")
    _age_tree(folder, by_ns=2 * HOUR_AGO_NS)  # settled, and other times than the listing's
    assert _found(folder, cache, "CCCC0") == ["a/libnew.so"]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "[]",
        "null",
        '"text"',
        "{",
        '{"version": 2}',
        '{"signature": "0123", "objects": []}',  # version 1's format
        '{"version": 1, "root": "%s", "folders": [], "objects": []}',
        '{"version": 2, "root": "%s", "folders": %s, "objects": [[1, 2]]}',
        '{"version": 2, "root": "%s", "folders": %s, "objects": [[null, 0, 0, "AAAA0", ""]]}',
        '{"version": 2, "root": "%s", "folders": %s, "objects": 7}',
    ],
)
def test_a_damaged_or_old_listing_costs_a_scan(text: str, tmp_path: Path, reads: list[str]) -> None:
    folder, cache = _folder(tmp_path), tmp_path / "cache"
    assert _found(folder, cache) == ["a/libobj.so"]
    listing = _listing(cache)
    folders = json.dumps(json.loads(listing.read_text())["folders"])
    listing.write_text(text.replace("%s", str(folder), 1).replace("%s", folders, 1))
    assert _found(folder, cache) == ["a/libobj.so"]
    assert len(reads) == 4
