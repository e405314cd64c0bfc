"""Helpers shared by the symbol tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from inspector.core.symbols import IndexCache, SymbolFile


@pytest.fixture
def cache(tmp_path: Path) -> IndexCache:
    return IndexCache(tmp_path / "index-cache")


@pytest.fixture
def open_sym(tmp_path: Path) -> Iterator[object]:
    """open_sym(text_or_bytes, cache=None) -> SymbolFile written to a temporary file (closed afterwards)."""
    opened: list[SymbolFile] = []
    counter = iter(range(1_000_000))

    def _open(content: str | bytes, cache: IndexCache | None = None, name: str = "test.sym") -> SymbolFile:
        path = tmp_path / f"{next(counter)}-{name}"
        path.write_bytes(content.encode("utf-8", "surrogateescape") if isinstance(content, str) else content)
        sf = SymbolFile.open(path, cache=cache)
        opened.append(sf)
        return sf

    yield _open
    for sf in opened:
        sf.close()
