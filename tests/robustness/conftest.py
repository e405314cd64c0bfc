"""The damaged inputs, made once per session, and each input's outcome, computed once and shared."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

# The main window and its message-box patch, for test_gui_damaged_inputs.py (Qt runs offscreen).
from tests.gui.conftest import message_boxes, settings, window  # noqa: F401
from tests.robustness.damage import (
    DumpSeed,
    DumpVariant,
    SymVariant,
    dump_seeds,
    dump_variants,
    symbol_variants,
)
from tests.robustness.harness import Outcome, run_library

#: Generated once, at collection time (parametrize needs the names); the synthetic seeds' symbol
#: files go to a private temporary directory, removed when the session ends.
_COLLECTION: dict[str, object] = {}


def collected_seeds() -> list[DumpSeed]:
    if "seeds" not in _COLLECTION:
        import atexit
        import shutil
        import tempfile

        directory = Path(tempfile.mkdtemp(prefix="robustness-seeds-"))
        atexit.register(shutil.rmtree, directory, ignore_errors=True)
        _COLLECTION["seeds"] = dump_seeds(directory)
    seeds = _COLLECTION["seeds"]
    assert isinstance(seeds, list)
    return seeds


def collected_dump_variants() -> list[DumpVariant]:
    if "dumps" not in _COLLECTION:
        _COLLECTION["dumps"] = dump_variants(collected_seeds())
    variants = _COLLECTION["dumps"]
    assert isinstance(variants, list)
    return variants


def collected_symbol_variants() -> list[SymVariant]:
    if "syms" not in _COLLECTION:
        _COLLECTION["syms"] = symbol_variants(collected_seeds())
    variants = _COLLECTION["syms"]
    assert isinstance(variants, list)
    return variants


class Outcomes:
    """Each dump variant run through the library once (tests of one variant share the run)."""

    def __init__(self, directory: Path, cache: Path) -> None:
        self.directory = directory
        self.cache = cache
        self.directory.mkdir(parents=True, exist_ok=True)
        self._done: dict[str, Outcome] = {}
        self._originals: dict[str, Outcome] = {}

    def of(self, variant: DumpVariant) -> Outcome:
        outcome = self._done.get(variant.name)
        if outcome is None:
            symbols = variant.seed.symbol_paths if variant.seed is not None else ()
            outcome = run_library(variant.materialize(self.directory), symbols, self.cache)
            self._done[variant.name] = outcome
        return outcome

    def original(self, seed: DumpSeed) -> Outcome:
        outcome = self._originals.get(seed.name)
        if outcome is None:
            path = self.directory / f"original-{seed.name}.dmp"
            path.write_bytes(seed.data)
            outcome = run_library(path, seed.symbol_paths, self.cache)
            assert not outcome.refused and outcome.foreign is None and not outcome.problems, seed.name
            self._originals[seed.name] = outcome
        return outcome


@pytest.fixture(scope="session")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Outcomes]:
    root = tmp_path_factory.mktemp("robustness")
    yield Outcomes(root / "variants", root / "symbol-cache")
