"""Property: every lookup of the lazy index (built, and re-opened from its cache) equals a brute-force
reference that parses every line and scans linearly."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from inspector.core.symbols import IndexCache, SymbolFile, index_build
from tests.symbols.reference_model import Reference
from tests.symbols.sym_strategies import probe_addresses, sym_files

SETTINGS = settings(
    max_examples=300,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def normalised(rules: dict[str, str] | None) -> dict[str, str] | None:
    return None if rules is None else {k: " ".join(v.split()) for k, v in rules.items()}


def assert_lookups_match(sf: SymbolFile, ref: Reference, addresses: list[int]) -> None:
    for a in addresses:
        context = f"address {a:#x}"
        f, rf = sf.find_function(a), ref.function(a)
        assert (f is None) == (rf is None), context
        if f is not None and rf is not None:
            expected = (rf.address, rf.size, rf.param, rf.name.decode("utf-8", "replace"), rf.multiple)
            assert (f.address, f.size, f.parameter_size, f.name, f.multiple) == expected, context

        p, rp = sf.find_public(a), ref.public(a)
        assert (p is None) == (rp is None), context
        if p is not None and rp is not None:
            assert (p.address, p.name, p.parameter_size, p.multiple) == (
                rp[0],
                rp[1].decode("utf-8", "replace"),
                rp[2],
                rp[3],
            ), context

        line, rline = sf.find_line(a), ref.line(a)
        assert (line is None) == (rline is None), context
        if line is not None and rline is not None:
            assert (line.address, line.size, line.line, line.file_id) == rline, context
            assert line.file == ref.file_name(rline[3]), context

        chain = [
            (c.depth, c.address, c.size, c.origin_id, c.name, c.call_file_id, c.call_file, c.call_line)
            for c in sf.find_inlines(a)
        ]
        assert chain == ref.inline_chain(a), context
        assert sf.symbolize(a) == ref.symbolize(a), context
        assert sf.has_symbol_at(a) == ref.has_symbol_at(a), context
        assert sf.find_stack_win(a) == ref.stack_win(a), context

        cfi, rcfi = sf.find_cfi(a), ref.cfi(a)
        assert (cfi is None) == (rcfi is None), context
        if cfi is not None and rcfi is not None:
            init, size, rows, applied, rules = rcfi
            assert (cfi.init, cfi.size, cfi.rows, cfi.applied) == (init, size, rows, applied), context
            assert normalised(None if cfi.rules is None else dict(cfi.rules)) == normalised(
                None if rules is None else dict(rules)
            ), context


def assert_damage_matches(sf: SymbolFile, ref: Reference) -> None:
    report = sf.check_all()
    assert dict(report.counts) == {k: v for k, v in ref.damage.items() if v}
    assert report.missing_final_newline == ref.missing_final_newline
    assert report.old_inline_syntax == ref.old_inline_syntax


@SETTINGS
@given(data=sym_files())
def test_index_and_cache_lookups_equal_the_reference(tmp_path: Path, data: bytes) -> None:
    check_against_reference(tmp_path, data)


@settings(SETTINGS, max_examples=60)
@given(data=sym_files())
def test_tiny_chunks_give_the_same_index(tmp_path: Path, data: bytes) -> None:
    """Chunks of a few dozen bytes put chunk boundaries inside and between every kind of line."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(index_build, "CHUNK_BYTES", 23)
        check_against_reference(tmp_path, data)


def check_against_reference(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "file.sym"
    path.write_bytes(data)
    ref = Reference(data)
    addresses = probe_addresses(data)
    cache = IndexCache(tmp_path / f"cache-{abs(hash(data))}")
    with SymbolFile.open(path, cache=cache) as built:
        assert built.index_source == "built+stored"
        assert_lookups_match(built, ref, addresses)
        assert_damage_matches(built, ref)
    with SymbolFile.open(path, cache=cache) as cached:
        assert cached.index_source == "cache"
        assert_lookups_match(cached, ref, addresses)
        assert_damage_matches(cached, ref)
    with SymbolFile.open(path) as uncached:
        assert uncached.index_source == "built"
        assert_lookups_match(uncached, ref, addresses[::7])
