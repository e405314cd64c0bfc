"""The on-disk index cache: round trip, validation, rebuilds, degraded I/O."""

from __future__ import annotations

import errno
import json
import logging
import os
import struct
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.core.symbols import IndexCache, SymbolFile, default_cache_directory
from inspector.core.symbols.errors import (
    ChecksumMismatch,
    IdentityMismatch,
    IndexCacheError,
    MalformedIndex,
    WrongEndianness,
    WrongMagic,
    WrongVersion,
)
from inspector.core.symbols.index_format import (
    FORMAT_VERSION,
    HEADER,
    MAGIC,
    SECTION,
    IndexImage,
    SymbolIdentity,
)
from tests.synth.sym import Inline, SymBuilder

REPO = Path(__file__).resolve().parents[2]


def sample() -> SymBuilder:
    return (
        SymBuilder()
        .code_id("ABCDEF", "libsample.so")
        .file(0, "a.c")
        .file(1, "b.h")
        .inline_origin(0, "inlined")
        .func(
            0x100,
            0x40,
            "first",
            lines=[(0x100, 0x10, 1, 0), (0x110, 0x30, 2, 1)],
            inlines=[Inline(0, 9, 0, 0, [(0x110, 8)])],
        )
        .func(0x200, 0x20, "second", parameter_size=4, lines=[(0x200, 0x20, 7, 1)])
        .public(0x180, "public between")
        .cfi(0x100, 0x40, ".cfa: $rsp 8 + .ra: .cfa -8 + ^", [(0x104, ".cfa: $rsp 16 +")])
        .stack_win(4, 0x200, 0x20, program="$eip $esp ^ =")
        .raw("garbage")
    )


def lookups(sf: SymbolFile) -> list[object]:
    result: list[object] = []
    for a in (0xFF, 0x100, 0x112, 0x13F, 0x180, 0x1FF, 0x200, 0x21F, 0x220, 0x300):
        result += [
            sf.symbolize(a),
            sf.find_cfi(a),
            sf.find_stack_win(a),
            sf.has_symbol_at(a),
            sf.find_line(a),
        ]
    result += [sf.damage, sf.counts, sf.module, sf.info]
    return result


@pytest.fixture
def sym_path(tmp_path: Path) -> Path:
    return sample().write(tmp_path / "sample.sym")


def test_header_layout_is_pinned() -> None:
    assert (HEADER.size, SECTION.size, MAGIC, FORMAT_VERSION) == (64, 24, b"CISYMIDX", 1)


def test_round_trip_gives_identical_lookups(sym_path: Path, cache: IndexCache) -> None:
    with SymbolFile.open(sym_path, cache=cache) as built:
        expected = lookups(built)
        assert built.index_source == "built+stored"
    identity_path = cache.path_for(SymbolIdentity(os.path.realpath(sym_path), 0, 0, b""))
    assert identity_path is not None and os.path.isfile(identity_path)
    assert "sample.sym" in os.path.basename(identity_path)
    with SymbolFile.open(sym_path, cache=cache) as cached:
        assert cached.index_source == "cache"
        assert lookups(cached) == expected
    assert cache.last_event == "loaded from cache"


def test_a_second_process_does_not_rescan_or_import_numpy(sym_path: Path, cache: IndexCache) -> None:
    SymbolFile.open(sym_path, cache=cache).close()
    code = (
        "import sys\n"
        "from inspector.core.symbols import IndexCache, SymbolFile\n"
        f"sf = SymbolFile.open({str(sym_path)!r}, cache=IndexCache({str(cache.directory)!r}))\n"
        "print(sf.index_source, 'numpy' in sys.modules, sf.symbolize(0x105).function_name)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.split() == ["cache", "False", "first"]


def _cache_file(cache: IndexCache, sym_path: Path) -> Path:
    files = list(Path(str(cache.directory)).glob("*.symidx"))
    assert len(files) == 1, files
    return files[0]


def _reopen_expecting_rebuild(sym_path: Path, cache: IndexCache, expected: list[object], code: str) -> None:
    with SymbolFile.open(sym_path, cache=cache) as sf:
        assert sf.index_source == "built+stored", list(cache.events)
        assert lookups(sf) == expected
    assert code in cache.events[-2], list(cache.events)
    with SymbolFile.open(sym_path, cache=cache) as again:
        assert again.index_source == "cache"  # the rebuilt entry is valid


@pytest.mark.parametrize(
    ("damage", "code"),
    [
        ("truncate", "MalformedIndex"),
        ("bit flip in the body", "ChecksumMismatch"),
        ("wrong version", "WrongVersion"),
        ("wrong magic", "WrongMagic"),
        ("byte-swapped", "WrongEndianness"),
        ("empty", ""),
    ],
)
def test_damaged_cache_is_detected_and_rebuilt(
    sym_path: Path, cache: IndexCache, damage: str, code: str
) -> None:
    with SymbolFile.open(sym_path, cache=cache) as built:
        expected = lookups(built)
    entry = _cache_file(cache, sym_path)
    raw = bytearray(entry.read_bytes())
    if damage == "truncate":
        raw = raw[: len(raw) // 2]
    elif damage == "bit flip in the body":
        raw[len(raw) - 100] ^= 0x10
    elif damage == "wrong version":
        struct.pack_into("=I", raw, 8, FORMAT_VERSION + 1)
    elif damage == "wrong magic":
        raw[0:8] = b"NOTANIDX"
    elif damage == "byte-swapped":
        struct.pack_into("=Q", raw, 16, 0x0807060504030201)
    else:
        raw = bytearray()
        code = "empty cache entry"
    entry.write_bytes(bytes(raw))
    _reopen_expecting_rebuild(sym_path, cache, expected, code)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_single_bit_flip_or_truncation_is_rejected(tmp_path: Path, data: st.DataObject) -> None:
    sym = sample().write(tmp_path / "flip.sym")
    identity = SymbolIdentity(
        os.path.realpath(sym), sym.stat().st_size, sym.stat().st_mtime_ns, sample().lines()[0].encode()
    )
    cache = IndexCache(tmp_path / "flip-cache")
    SymbolFile.open(sym, cache=cache).close()
    entry = next(Path(str(cache.directory)).glob("*.symidx"))
    good = entry.read_bytes()
    IndexImage(good, identity).release()
    if data.draw(st.booleans()):
        bit = data.draw(st.integers(0, len(good) * 8 - 1))
        bad = bytearray(good)
        bad[bit // 8] ^= 1 << (bit % 8)
    else:
        bad = bytearray(good[: data.draw(st.integers(0, len(good) - 1))])
    with pytest.raises(IndexCacheError):
        IndexImage(bytes(bad), identity)


def test_identity_catches_a_changed_size(sym_path: Path, cache: IndexCache) -> None:
    SymbolFile.open(sym_path, cache=cache).close()
    sym_path.write_text(sample().public(0x400, "added").text())
    with SymbolFile.open(sym_path, cache=cache) as sf:
        assert sf.index_source == "built+stored"
        public = sf.find_public(0x400)
        assert public is not None and public.name == "added"
    assert "IdentityMismatch" in cache.events[-2]


def test_identity_catches_a_changed_mtime(sym_path: Path, cache: IndexCache) -> None:
    SymbolFile.open(sym_path, cache=cache).close()
    st = sym_path.stat()
    os.utime(sym_path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    with SymbolFile.open(sym_path, cache=cache) as sf:
        assert sf.index_source == "built+stored"
    assert "IdentityMismatch" in cache.events[-2]


def test_identity_catches_a_changed_module_line(sym_path: Path, cache: IndexCache) -> None:
    SymbolFile.open(sym_path, cache=cache).close()
    st = sym_path.stat()
    text = sym_path.read_bytes().replace(b"x86_64", b"arm64_", 1)
    sym_path.write_bytes(text)
    os.utime(sym_path, ns=(st.st_atime_ns, st.st_mtime_ns))
    with SymbolFile.open(sym_path, cache=cache) as sf:
        assert sf.index_source == "built+stored"
        assert sf.module is not None and sf.module.cpu == "arm64_"


def test_rewritten_file_with_same_size_mtime_and_first_line_is_reindexed(
    sym_path: Path, cache: IndexCache, caplog: pytest.LogCaptureFixture
) -> None:
    """The identity cannot see it; the records at the indexed offsets no longer parse, so the file is
    indexed again instead of giving wrong answers."""
    SymbolFile.open(sym_path, cache=cache).close()
    st = sym_path.stat()
    sym_path.write_bytes(sym_path.read_bytes().replace(b"FUNC 100 40 0 first", b"XXXX 100 40 0 first"))
    os.utime(sym_path, ns=(st.st_atime_ns, st.st_mtime_ns))
    with SymbolFile.open(sym_path, cache=cache) as sf, caplog.at_level(logging.WARNING):
        assert sf.index_source == "cache"
        assert sf.find_function(0x105) is None
        assert "re-indexing" in caplog.text
        second = sf.find_function(0x205)
        assert second is not None and second.name == "second"


def test_unwritable_cache_degrades_to_no_cache_with_one_warning(
    tmp_path: Path, sym_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "a file"
    blocker.write_text("not a directory")
    cache = IndexCache(blocker / "cache")
    with caplog.at_level(logging.WARNING):
        for _ in range(3):
            with SymbolFile.open(sym_path, cache=cache) as sf:
                assert sf.index_source == "built"
                assert sf.symbolize(0x105) is not None
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "continuing without the symbol index cache" in warnings[0].getMessage()


def test_disk_full_while_writing_degrades_to_no_cache(
    sym_path: Path, cache: IndexCache, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def full(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    with caplog.at_level(logging.WARNING), SymbolFile.open(sym_path, cache=cache) as sf:
        assert sf.index_source == "built"
        assert sf.symbolize(0x105) is not None
    assert "No space left" in caplog.text
    assert not list(Path(str(cache.directory)).glob("*")), "the temporary file must be removed"


def test_unreadable_cache_entry_degrades_to_rebuilding(
    sym_path: Path, cache: IndexCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    SymbolFile.open(sym_path, cache=cache).close()
    entry = _cache_file(cache, sym_path)
    entry.unlink()
    entry.mkdir()  # opening a directory as a file fails with an OSError other than "not found"
    with SymbolFile.open(sym_path, cache=cache) as sf:
        assert sf.index_source == "built"


def test_no_cache_directory_means_no_cache(sym_path: Path) -> None:
    cache = IndexCache(None)
    assert not cache.enabled and cache.path_for(SymbolIdentity("x", 0, 0, b"")) is None
    with SymbolFile.open(sym_path, cache=cache) as sf:
        assert sf.index_source == "built"


def test_default_cache_directory_is_the_user_cache_dir() -> None:
    path = default_cache_directory()
    assert path.name == "symbol-index" and "crash-inspector" in str(path)


@pytest.mark.parametrize(
    "env",
    [
        {"XDG_CACHE_HOME": "/srv/cache", "HOME": "/home/u"},
        {"HOME": "/home/u"},
        {"XDG_CACHE_HOME": "", "HOME": "/home/u"},
        {"XDG_CACHE_HOME": "relative/cache", "HOME": "/home/u"},  # not absolute: ignored (XDG)
        {"XDG_CACHE_HOME": "/srv/cache", "HOME": "relative"},
        {"HOME": "relative"},  # platformdirs' own answer (the account's home)
        {},
    ],
)
def test_user_cache_directory_is_platformdirs_answer_without_importing_it(env: dict[str, str]) -> None:
    # the folder is decided without platformdirs on the stackwalk path (start-up cost); it must be
    # the folder platformdirs names, or indexes and downloads would move for existing users
    child = (
        "import json, sys\n"
        "from inspector.core.symbols.cache import user_cache_directory\n"
        "ours = str(user_cache_directory())\n"
        "imported = 'platformdirs' in sys.modules\n"
        "import platformdirs\n"
        "print(json.dumps([ours, platformdirs.user_cache_dir('crash-inspector'), imported]))\n"
    )
    clean = {k: v for k, v in os.environ.items() if k not in ("XDG_CACHE_HOME", "HOME")}
    run = subprocess.run(
        [sys.executable, "-c", child], env={**clean, **env}, capture_output=True, text=True, check=True
    )
    ours, theirs, imported = json.loads(run.stdout)
    assert ours == theirs
    if os.path.isabs(env.get("XDG_CACHE_HOME", "")) or os.path.isabs(env.get("HOME", "")):
        assert not imported


def test_concurrent_builders_leave_a_valid_entry(sym_path: Path, cache: IndexCache) -> None:
    errors: list[BaseException] = []

    def build() -> None:
        try:
            SymbolFile.open(sym_path, cache=cache).close()
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=build) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    with SymbolFile.open(sym_path, cache=cache) as sf:
        assert sf.index_source == "cache"
    assert [p.name for p in Path(str(cache.directory)).iterdir() if p.name.startswith(".tmp")] == []


def test_index_errors_have_stable_codes() -> None:
    assert [
        c.code
        for c in (
            WrongMagic,
            WrongVersion,
            WrongEndianness,
            IdentityMismatch,
            ChecksumMismatch,
            MalformedIndex,
        )
    ] == [
        "WrongMagic",
        "WrongVersion",
        "WrongEndianness",
        "IdentityMismatch",
        "ChecksumMismatch",
        "MalformedIndex",
    ]


_RACER = """
import os, sys
from pathlib import Path
from inspector.core.symbols import IndexCache, SymbolFile
sym, cache_dir, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
cache = IndexCache(cache_dir)
sources = set()
for _ in range(rounds):
    for entry in Path(cache_dir).glob("*.symidx"):  # force a rebuild (and a write) now and then
        if os.getpid() % 2 == _ % 2:
            try:
                entry.unlink()
            except FileNotFoundError:
                pass
    with SymbolFile.open(sym, cache=cache) as sf:
        sources.add(sf.index_source)
        f = sf.symbolize(0x105)
        assert f is not None and f.function_name == "first", f
        assert sf.find_cfi(0x104) is not None and sf.find_stack_win(0x205) is not None
print(" ".join(sorted(sources)))
"""


def test_two_processes_racing_on_one_sym_never_trust_a_torn_entry(sym_path: Path, cache: IndexCache) -> None:
    """Two processes build, write, delete and read the same entry at once: every lookup is right,
    no temporary file is left behind, and the entry left is valid."""
    command = [sys.executable, "-c", _RACER, str(sym_path), str(cache.directory), "40"]
    racers = [subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)]
    racers.append(
        subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    )
    results = [racer.communicate(timeout=120) for racer in racers]
    for racer, (out, err) in zip(racers, results, strict=True):
        assert racer.returncode == 0, err
        assert "built" in out  # each process wrote the entry at least once
    assert [p.name for p in Path(str(cache.directory)).iterdir() if p.name.startswith(".tmp")] == []
    with SymbolFile.open(sym_path, cache=cache) as sf:
        assert sf.index_source == "cache"
