"""`--symbols-tmp DIR`: downloads are written in DIR and moved into the cache only when complete."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from inspector.core.symbols import download_cache
from inspector.core.symbols.download_cache import DownloadCache, SymbolLookup

LOOKUP = SymbolLookup(("app.pdb", "0123456789ABCDEF0123456789ABCDEF1", "app.sym"), "debug id")


def _download(cache: DownloadCache) -> tuple[Path, Path]:
    """(where the file was while downloading, where it ended up)."""
    with cache.writer(LOOKUP) as pending:
        pending.file.write(b"MODULE windows x86 0123456789ABCDEF0123456789ABCDEF1 app.pdb\n")
        written = pending.temp
        assert written.is_file()
        final = cache.commit(pending, "https://symbols.example.com/app.pdb")
    return written, final


def test_the_download_is_written_in_the_temporary_folder(tmp_path: Path) -> None:
    cache = DownloadCache(tmp_path / "cache", partial_dir=tmp_path / "tmp")
    written, final = _download(cache)
    assert written.parent == tmp_path / "tmp" and not written.exists()
    assert final == tmp_path / "cache" / "app.pdb" / LOOKUP.components[1] / "app.sym"
    assert final.read_text().endswith("INFO URL https://symbols.example.com/app.pdb\n")


def test_a_temporary_folder_on_another_filesystem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A rename across filesystems fails (EXDEV): the file is copied beside the target, then renamed."""
    real_replace = os.replace
    renames: list[tuple[str, str]] = []

    def replace(source: str | os.PathLike[str], target: str | os.PathLike[str]) -> None:
        renames.append((os.fspath(source), os.fspath(target)))
        if Path(source).parent == tmp_path / "tmp":
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        real_replace(source, target)

    monkeypatch.setattr(download_cache.os, "replace", replace)
    cache = DownloadCache(tmp_path / "cache", partial_dir=tmp_path / "tmp")
    written, final = _download(cache)
    assert final.read_text().startswith("MODULE windows x86")
    assert not written.exists() and list((tmp_path / "tmp").iterdir()) == []
    assert [Path(source).parent for source, _ in renames] == [
        tmp_path / "tmp",
        tmp_path / "cache" / ".partial",
    ]
    assert list((tmp_path / "cache" / ".partial").iterdir()) == []
