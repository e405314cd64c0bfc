"""Fixtures of the drop-in tests (helpers are in `common.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def symbols_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One symbol-index cache for the session's in-process walks, so each `.sym` file is indexed once."""
    return tmp_path_factory.mktemp("dropin-symbol-index-cache")
