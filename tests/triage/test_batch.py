"""A batch: found by content, bad entries reported without stopping it, and the same results
from one process, two worker processes and a two-worker Dask cluster."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from inspector.core.cancel import CancelToken
from inspector.core.errors import Cancelled
from inspector.core.triage import CrashSet, FoundDump, TriageOptions, find_dumps, plan_chunks, run_batch
from inspector.core.triage.discover import dump_kind
from tests.triage.conftest import BAD_ENTRIES, CRASH_FOLDER_ENTRIES, OWN_CRASHES, own_symbol_paths


def _triage(found: list[FoundDump], options: TriageOptions, **how: object) -> CrashSet:
    crashes = CrashSet(len(found))
    for index, crash in run_batch(found, options, **how):  # type: ignore[arg-type]
        crashes.add(index, crash)
    return crashes


def test_dumps_are_found_by_content_and_bad_entries_are_kept(crash_folder: Path) -> None:
    found = {os.path.relpath(f.path, crash_folder): f for f in find_dumps([crash_folder])}
    assert set(found) == {
        "sample-report.dmp",
        *(f"uploads/{name}-report.dmp" for name in OWN_CRASHES if name != "sample"),
        "uploads/0123-abcd",  # no extension, a minidump by content
        "broken/folder.dmp/inside",  # inside a directory named like a dump
        *BAD_ENTRIES,
    }  # README.txt and the .sym files are passed over
    assert found["uploads/0123-abcd"].kind == "minidump"
    assert found["broken/truncated.dmp"].kind == "minidump"  # its header is intact
    assert found["broken/notes-not-a-dump.dmp"].kind is None
    # routing: the two copies of the sample have the same main module, other crashes others
    assert found["uploads/0123-abcd"].route == found["sample-report.dmp"].route != b""
    assert found["uploads/libc_abort-report.dmp"].route not in (b"", found["sample-report.dmp"].route)


def test_a_file_named_directly_is_always_triaged(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    assert [f.path for f in find_dumps([text, tmp_path / "missing.dmp"])] == [
        str(text),
        str(tmp_path / "missing.dmp"),
    ]


def test_dump_kind() -> None:
    assert dump_kind(b"MDMP\x93\xa7") == "minidump"
    assert dump_kind(b"PMDM") == "minidump"  # big-endian
    assert dump_kind(b"MODULE Linux x86_64 ...") is None
    assert dump_kind(b"") is None


def test_bad_files_are_reported_and_never_stop_the_run(
    crash_folder: Path, own_options: TriageOptions
) -> None:
    found = list(find_dumps([crash_folder]))
    crashes = _triage(found, own_options, workers=2)
    assert crashes.done == len(found)
    by_name = {os.path.relpath(c.dump, crash_folder): c for c in crashes}
    assert by_name["broken/notes-not-a-dump.dmp"].signature == "unreadable dump (NotAMinidump)"
    assert "not a minidump" in by_name["broken/notes-not-a-dump.dmp"].problems[0]
    assert by_name["broken/gone.dmp"].signature == "unreadable dump (UnreadableFile)"
    assert "no such file" in by_name["broken/gone.dmp"].problems[0]
    assert by_name["broken/folder.dmp"].signature == "unreadable dump (UnreadableFile)"
    assert "is a directory" in by_name["broken/folder.dmp"].problems[0]
    truncated = by_name["broken/truncated.dmp"]
    assert not truncated.readable or truncated.problems  # cut after 1,500 bytes: said either way
    # every good dump got its own crash's signature, the copies of the sample the same one
    assert by_name["uploads/0123-abcd"].signature == by_name["sample-report.dmp"].signature == "store_pixel"
    assert by_name["broken/folder.dmp/inside"].signature == "store_pixel"
    assert by_name["uploads/lib_callback-report.dmp"].signature == "discounted_unit_price"
    groups = crashes.groups()
    assert groups[0].signature == "store_pixel" and groups[0].count == 3  # biggest first
    assert [g.count for g in groups] == sorted((g.count for g in groups), reverse=True)


def test_unreadable_folder_is_reported(
    tmp_path: Path, own_options: TriageOptions, monkeypatch: pytest.MonkeyPatch
) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    shutil.copyfile(OWN_CRASHES["sample"][0], tmp_path / "a.dmp")
    scandir = os.scandir

    def refuse_locked(path: object = ".") -> object:  # as a folder without read permission (we run as root)
        if str(path) == str(locked):
            raise PermissionError(13, "Permission denied", str(path))
        return scandir(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "scandir", refuse_locked)
    crashes = _triage(list(find_dumps([tmp_path])), own_options, workers=1)
    assert sorted(c.signature for c in crashes) == ["store_pixel", "unreadable dump (UnreadableFolder)"]
    problem = next(c for c in crashes if not c.readable).problems[0]
    assert problem == f"{locked}: cannot list the folder (Permission denied)"


@pytest.fixture(scope="module")
def dask_scheduler() -> Iterator[str]:
    """A dask.distributed cluster of two worker processes on loopback, for this module."""
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    ) as cluster:
        yield cluster.scheduler_address


def _identical_three_ways(
    found: list[FoundDump], options: TriageOptions, scheduler: str
) -> dict[str, object]:
    one = _triage(found, options, workers=1).to_json()
    assert _triage(found, options, workers=2).to_json() == one
    assert _triage(found, options, scheduler=scheduler).to_json() == one
    return one


@pytest.mark.slow
def test_one_process_two_workers_and_dask_give_identical_results(
    crash_folder: Path, own_options: TriageOptions, dask_scheduler: str
) -> None:
    document = _identical_three_ways(list(find_dumps([crash_folder])), own_options, dask_scheduler)
    assert len(document["crashes"]) == CRASH_FOLDER_ENTRIES  # type: ignore[arg-type]


@pytest.mark.slow
@pytest.mark.golden
def test_identical_results_on_the_corpus(corpus_dir: Path, index_cache: str, dask_scheduler: str) -> None:
    stores = ("breakpad/symbols", "rust-minidump/symbols", "lldb/symbols")
    symbols = sorted(str(corpus_dir / store) for store in stores)
    options = TriageOptions(symbol_paths=(*symbols, *own_symbol_paths()), index_cache=index_cache)
    found = list(find_dumps([corpus_dir]))
    document = _identical_three_ways(found, options, dask_scheduler)
    assert len(document["crashes"]) == len(found) > 70  # type: ignore[arg-type]


def test_chunks_keep_a_builds_dumps_together() -> None:
    found = [FoundDump(f"/d/{i}", "minidump", route=b"AB"[i % 2 : i % 2 + 1]) for i in range(40)]
    chunks = plan_chunks(found, workers=2)
    # 20 dumps of each build, about 4 chunks a worker: 5 per chunk, none mixing the builds
    assert sorted(i for chunk in chunks for i, _ in chunk) == list(range(40))
    assert all(len({found[i].route for i, _ in chunk}) == 1 for chunk in chunks)
    assert all(len(chunk) <= 16 for chunk in chunks)
    # the folders a worker cannot list are not sent to a worker (reported by the parent)
    assert plan_chunks([FoundDump("/x", problem="cannot list")], workers=2) == []


def test_cancel_stops_a_batch(crash_folder: Path, own_options: TriageOptions) -> None:
    cancel = CancelToken()
    results = run_batch(list(find_dumps([crash_folder])), own_options, workers=1, cancel=cancel)
    next(results)
    cancel.cancel()
    with pytest.raises(Cancelled):
        next(results)


def test_without_dask_the_scheduler_option_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, own_options: TriageOptions
) -> None:
    import sys

    from inspector.core.triage import ClusterUnavailable

    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    found = [FoundDump(str(OWN_CRASHES["sample"][0]), "minidump")]
    with pytest.raises(ClusterUnavailable, match=r"pip install 'crash-inspector\[cluster\]'"):
        list(run_batch(found, own_options, scheduler="tcp://127.0.0.1:1"))


def test_an_unreachable_scheduler_is_one_clear_error(own_options: TriageOptions) -> None:
    from inspector.core.triage import ClusterUnavailable, parallel

    found = [FoundDump(str(OWN_CRASHES["sample"][0]), "minidump")]
    original = parallel.CONNECT_TIMEOUT
    parallel.CONNECT_TIMEOUT = 1.0
    try:
        with pytest.raises(
            ClusterUnavailable, match=r"cannot reach the Dask scheduler at tcp://127\.0\.0\.1:9"
        ):
            list(run_batch(found, own_options, scheduler="tcp://127.0.0.1:9"))
    finally:
        parallel.CONNECT_TIMEOUT = original


def test_corpus_needs_no_symbols_to_be_triaged(corpus_dir: Path, tmp_path: Path) -> None:
    """Without any symbols every readable corpus dump still gets a signature (module names)."""
    found = list(find_dumps([corpus_dir / "breakpad"]))
    crashes = _triage(found, TriageOptions(index_cache=str(tmp_path)), workers=1)
    assert len(crashes.crashes()) == len(found) and all(c.signature for c in crashes)


def test_symbols_from_a_server_give_the_same_signatures_in_worker_processes(
    crash_folder: Path, own_options: TriageOptions, tmp_path: Path
) -> None:
    """Each worker downloads what it lacks (into the shared download cache) and reads its token
    from its own environment: the results equal those made with the symbol folders."""
    from tests.symbols.server.http_server import SymbolHttpServer

    server = SymbolHttpServer()
    try:
        found = list(find_dumps([crash_folder]))
        local = _triage(found, own_options, workers=1).to_json()
        remote = TriageOptions.with_cache_root(
            (), cache_root=str(tmp_path / "cache"), symbol_urls=(server.url,)
        )
        assert _triage(found, remote, workers=2).to_json() == local
        assert server.requests  # the symbols came from the server
        assert (tmp_path / "cache" / "symbols" / "render_farm").is_dir()
    finally:
        server.close()


def test_a_microdump_log_in_a_folder_is_found_by_content_and_triaged(
    corpus_dir: Path, tmp_path: Path
) -> None:
    """The second kind of dump: a Breakpad microdump in a log, whatever the log is called."""
    shutil.copyfile(corpus_dir / "breakpad/microdump/microdump-x86.dmp", tmp_path / "logcat.txt")
    (tmp_path / "other.log").write_text("I/chromium: nothing crashed here\n")
    found = list(find_dumps([tmp_path]))
    assert [(Path(f.path).name, f.kind) for f in found] == [("logcat.txt", "microdump")]
    options = TriageOptions(symbol_paths=(str(corpus_dir / "breakpad/microdump/symbols"),))
    crash = _triage(found, options, workers=1).crashes()[0]
    assert crash.readable and crash.signature and not crash.signature.startswith("unreadable")
    assert crash.top_frames
