"""Fixtures: a real HTTP symbol server on 127.0.0.1 (see `http_server`), and a second one (another origin)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.symbols.server.http_server import SymbolHttpServer


@pytest.fixture
def server() -> Iterator[SymbolHttpServer]:
    s = SymbolHttpServer()
    yield s
    s.close()


@pytest.fixture
def other_server() -> Iterator[SymbolHttpServer]:
    """A second server on another port: another origin, for cross-origin redirects."""
    s = SymbolHttpServer()
    yield s
    s.close()
