"""Symbol servers: local paths first, then the download cache, then each server in order.

`ServerSymbolSupplier` is a `SymbolSupplier` (the `Symbolizer` uses it the same
way) whose `load` goes on where the local paths stop:

1. the local symbol paths, as `SymbolSupplier`;
2. the download cache (`DownloadCache`, a symbol store itself), by debug id,
   then by code id;
3. unless offline, each server in order: `BASE/<debug file>/<DEBUG ID>/<name>.sym
   ?code_file=…&code_id=…` (rust-minidump's request), then the code-id layout
   `BASE/<code file>/<CODE ID>/<name>.sym` as a fallback. A 404 is remembered
   in the cache for `negative_ttl` (per lookup and server) and not asked again.

Downloads run on a small pool of worker threads (`parallel`, default 4): the
`Symbolizer` loads lazily, one module at a time as frames need it, so on its own
it would download one file at a time. `prefetch(modules)` queues the modules a
walk is likely to need (`process` passes those that the threads' registers and
stack words point into, crashing thread first) and the pool fetches them in the
background while the walk goes on. When the walk asks for a module, its
download jumps the queue (or is joined if it is already running); the walk
waits only for that one. At most `parallel` downloads run at once, whoever
asked. Statuses (`download_statuses`) change as downloads go, for progress
displays; `close()` stops what is still running.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import queue
import shutil
import tempfile
import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from inspector.core.cancel import NEVER, CancelToken
from inspector.core.errors import Cancelled
from inspector.core.logs import get_logger
from inspector.core.module_identity import ModuleIdentity
from inspector.core.record import Record, field
from inspector.core.symbols.cache import IndexCache
from inspector.core.symbols.download_cache import DownloadCache, SymbolLookup, UnsafePath
from inspector.core.symbols.http_fetch import (
    FetchOutcome,
    FetchPolicy,
    HttpFetcher,
    SymbolServer,
    redacted,
    server_url,
)
from inspector.core.symbols.identity import MatchedBy, ObjectIdentity, has_debug_id
from inspector.core.symbols.objects.sources import FoundObject
from inspector.core.symbols.records import DownloadState, DownloadStatus, ServerAttempt
from inspector.core.symbols.supplier import (
    Located,
    PathProblem,
    SymbolSupplier,
    code_id_components,
    debug_id_components,
    leafname,
)
from inspector.core.symbols.symbolizer import ModuleKey, module_key

log = get_logger(__name__)


class SymbolServerOptions(Record):
    """Symbol servers and how to use them.

    `cache_dir`: where downloads are kept (None: a temporary folder removed when the
    run ends). `offline`: use only what is already in the cache. `parallel`: at most
    this many downloads at once. `prefetch`: download the modules the threads'
    registers and stack words point into before the walk asks for them.
    `negative_ttl`: seconds a "not on server" answer is remembered (0: never).
    `partial_dir`: where downloads are written before they are renamed into the cache
    (None: `.partial/` inside it; minidump-stackwalk's `--symbols-tmp`).
    """

    servers: tuple[SymbolServer, ...] = ()
    cache_dir: str | os.PathLike[str] | None = None
    #: debuginfod servers: binaries and debug files by build id (after the symbol servers)
    debuginfod: tuple[SymbolServer, ...] = ()
    offline: bool = False
    fetch: FetchPolicy = field(default_factory=FetchPolicy)
    parallel: int = 4
    prefetch: bool = True
    negative_ttl: float = 24 * 3600
    partial_dir: str | os.PathLike[str] | None = None

    @property
    def enabled(self) -> bool:
        return bool(self.servers) or bool(self.debuginfod) or self.cache_dir is not None


def server_options_for(
    urls: Iterable[str],
    *,
    downloads: str | os.PathLike[str] | None = None,
    keep_downloads: bool = True,
    partial_dir: str | os.PathLike[str] | None = None,
    offline: bool = False,
    fetch: FetchPolicy | None = None,
    environ: Mapping[str, str] | None = None,
    debuginfod: Iterable[str] = (),
) -> SymbolServerOptions | None:
    """What the headless commands' `--symbols-url`, `--offline` and `--symbols-cache` mean.

    None when there is neither a server nor `offline`. Downloads are kept in `downloads`
    (None: the user cache folder; `keep_downloads=False`: a temporary folder), written first
    in `partial_dir` (None: `.partial/` inside the cache). Each server's
    token is read from `environ` (default: this process's environment), so a batch worker
    on another machine uses its own and no token travels with the work.
    """
    urls, debuginfod = tuple(urls), tuple(debuginfod)
    if not urls and not debuginfod and not offline:
        return None
    from inspector.core.symbols.cache import default_download_directory
    from inspector.core.symbols.http_fetch import token_from_environment

    environ = os.environ if environ is None else environ
    folder: Path | None = None
    if keep_downloads:
        folder = Path(downloads) if downloads is not None else default_download_directory()
    return SymbolServerOptions(
        servers=tuple(SymbolServer(url, token_from_environment(url, environ)) for url in urls),
        debuginfod=tuple(SymbolServer(url, token_from_environment(url, environ)) for url in debuginfod),
        cache_dir=folder,
        partial_dir=partial_dir,
        offline=offline,
        fetch=fetch or FetchPolicy(),
    )


def lookups_for(module: ModuleIdentity) -> tuple[SymbolLookup, ...]:
    """The ways to ask for a module's file: by debug id, then by code id (rust-minidump's two layouts)."""
    out = []
    if (by_debug_id := debug_id_components(module)) is not None:
        out.append(SymbolLookup(by_debug_id, "debug id"))
    if (by_code_id := code_id_components(module)) is not None:
        out.append(SymbolLookup(by_code_id, "code id"))
    return tuple(out)


#: lookups whose file is a binary or debug file, not a `.sym`
OBJECT_KINDS = frozenset({"pdb", "pe", "debuginfo", "executable"})


def object_lookups_for(module: ModuleIdentity, *, debuginfod: bool) -> tuple[SymbolLookup, ...]:
    """The binaries and debug files to ask servers for.

    Microsoft's symbol-server layout for Windows modules: `<name>.pdb/<GUID><age>/<name>.pdb`
    (the PDB) and `<name>.dll/<TIMESTAMP><SIZE>/<name>.dll` (the PE, whose unwind tables give
    the CFI). debuginfod by build id: the debug file, then the executable; they are kept in the
    download cache as `<code file>/<BUILD ID>/<code file>.debug` and `…/<code file>`.
    """
    from inspector.core.symbols.objects.sources import build_id_of

    out: list[SymbolLookup] = []
    debug_file = leafname(module.debug_file)
    code_file = leafname(module.code_file)
    if debug_file.lower().endswith(".pdb") and module.debug_id:
        out.append(SymbolLookup((debug_file, module.debug_id.upper(), debug_file), "pdb"))
        if code_file and module.code_id:
            out.append(SymbolLookup((code_file, module.code_id.upper(), code_file), "pe"))
    elif not has_debug_id(module) and code_file.lower().endswith(PE_SUFFIXES) and module.code_id:
        # no CodeView record in the dump: the PE first, then the PDB it names (`pdb_lookup_through_pe`)
        out.append(SymbolLookup((code_file, module.code_id.upper(), code_file), "pe"))
    build_id = build_id_of(module)
    if debuginfod and build_id is not None:
        name = code_file or debug_file or "module"
        out.append(SymbolLookup((name, build_id.upper(), f"{name}.debug"), "debuginfo"))
        out.append(SymbolLookup((name, build_id.upper(), name), "executable"))
    return tuple(out)


#: the names of the PE files asked for by code id when the dump names no PDB
PE_SUFFIXES = (".exe", ".dll", ".sys", ".ocx", ".cpl", ".scr", ".drv", ".efi")


def pdb_lookup_through_pe(key: ModuleKey, pe_path: Path) -> SymbolLookup | None:
    """The PDB that a module's downloaded PE names in its CodeView record, when the dump names none.

    The second step of the exe → PDB walk (`objects.sources.named_by_pe`); None when the module
    has a debug id, the PE names no PDB, or the name it gives is not a safe file name.
    """
    from inspector.core.symbols.objects.sources import named_by_pe

    module = ObjectIdentity(key[2], key[3], key[0], key[1])
    named = named_by_pe(module, [FoundObject(str(pe_path), "symbol server")])
    if named is module or not named.debug_file.lower().endswith(".pdb"):
        return None
    lookup = SymbolLookup((named.debug_file, named.debug_id, named.debug_file), "pdb")
    return lookup if lookup.unsafe_reason is None else None


class _Job:
    __slots__ = ("done", "key", "lookups", "matched_by", "objects", "path", "started", "status")

    def __init__(self, key: ModuleKey, lookups: tuple[SymbolLookup, ...]) -> None:
        self.key = key
        self.lookups = lookups
        self.started = False
        self.done = threading.Event()
        self.path: Path | None = None
        self.objects: list[FoundObject] = []  # binaries and debug files downloaded (no `.sym` found)
        self.status: DownloadStatus | None = None
        self.matched_by: MatchedBy | None = None  # the lookup the server answered


_URGENT = 0
_PREFETCH = 1


class ServerSymbolSupplier(SymbolSupplier):
    """Local paths, then the download cache, then symbol servers (see the module docstring)."""

    def __init__(
        self,
        symbol_paths: Iterable[str | os.PathLike[str]],
        servers: SymbolServerOptions,
        *,
        cache: IndexCache | None = None,
        code_id_fallback: bool = True,
        cancel: CancelToken = NEVER,
        local_modules: bool = True,
    ) -> None:
        super().__init__(
            symbol_paths, cache=cache, code_id_fallback=code_id_fallback, local_modules=local_modules
        )
        self.options = servers
        self.servers = tuple(s for s in servers.servers if s.problem() is None)
        self.debuginfod = tuple(s for s in servers.debuginfod if s.problem() is None)
        everything = (*servers.servers, *servers.debuginfod)
        bad = [PathProblem(redacted(s.url), p) for s in everything if (p := s.problem()) is not None]
        self._temp_root: str | None = None
        if servers.cache_dir is not None:
            root = Path(servers.cache_dir)
        else:
            self._temp_root = tempfile.mkdtemp(prefix="crash-inspector-symbols-")
            root = Path(self._temp_root)
        self.download_cache = DownloadCache(
            root, negative_ttl=servers.negative_ttl, partial_dir=servers.partial_dir
        )
        self.download_cache.clean_partials()
        self.problems = (*self.problems, *bad)
        self._abort = cancel.child()
        self._lock = threading.Lock()
        self._jobs: dict[ModuleKey, _Job] = {}
        self._queue: queue.PriorityQueue[tuple[int, int, _Job | None]] = queue.PriorityQueue()
        self._order = itertools.count()
        self._workers: list[threading.Thread] = []
        self._fetcher: HttpFetcher | None = None
        self._statuses: dict[ModuleKey, DownloadStatus] = {}
        self._version = 0
        self._active = 0
        self._max_active = 0
        self._closed = False

    # ---- what `load` does past the local paths -----------------------------------------------

    def _find_remote(self, module: ModuleIdentity, cancel: CancelToken, local: Located) -> Located:
        if local.path is not None:
            return local
        lookups = lookups_for(module) + object_lookups_for(module, debuginfod=bool(self.debuginfod))
        tried = list(local.tried)
        with self._lock:
            queued = self._jobs.get(module_key(module))
        if queued is not None:  # a prefetch (maybe done already): its outcome, not "cached"
            return self._await(queued, tried, cancel)
        cached_objects: list[FoundObject] = []
        for lookup in lookups:
            cached = self.download_cache.find(lookup)
            with contextlib.suppress(UnsafePath):  # an unsafe name was never looked for
                tried.append(str(self.download_cache.path_for(lookup)))
            if cached is not None and lookup.kind in OBJECT_KINDS:
                url = self.download_cache.object_url(cached)
                cached_objects.append(FoundObject(str(cached), _origin(lookup), url, _matched_by(lookup)))
            elif cached is not None:
                status = DownloadStatus(DownloadState.CACHED)
                return Located(str(cached), tuple(tried), "download cache", status, MatchedBy(lookup.kind))
        for found in list(cached_objects):
            pe = found.path if found.origin == "symbol server" else None
            then = None if pe is None else pdb_lookup_through_pe(module_key(module), Path(pe))
            if then is not None and then not in lookups and (pdb := self.download_cache.find(then)):
                url = self.download_cache.object_url(pdb)
                cached_objects.append(FoundObject(str(pdb), "symbol server", url))
        if cached_objects:
            status = DownloadStatus(DownloadState.CACHED, url=cached_objects[0].url)
            return Located(None, tuple(tried), "download cache", status, objects=tuple(cached_objects))
        if not lookups:
            return local
        safe = tuple(lookup for lookup in lookups if lookup.unsafe_reason is None)
        if not safe:
            reason = f"unsafe file name: {lookups[0].unsafe_reason}"
            status = DownloadStatus(DownloadState.FAILED, reason=reason)
            self._set_status(module_key(module), status)
            return Located(None, tuple(tried), download=status)
        if self.options.offline or not (self.servers or self.debuginfod):
            status = DownloadStatus(DownloadState.OFFLINE)
            if self.servers or self.debuginfod:
                self._set_status(module_key(module), status)
            return Located(None, tuple(tried), download=status if self.servers or self.debuginfod else None)
        return self._await(self._submit(module_key(module), safe, _URGENT), tried, cancel)

    def _await(self, job: _Job, tried: list[str], cancel: CancelToken) -> Located:
        if not job.done.is_set():
            self._submit(job.key, job.lookups, _URGENT)  # to the front of the queue
        while not job.done.wait(0.05):
            cancel.check()
        outcome = job.status
        assert outcome is not None
        if job.objects and outcome.state is not DownloadState.CANCELLED:
            tried.extend(a.url for a in outcome.attempts)
            return Located(None, tuple(tried), job.objects[0].origin, outcome, objects=tuple(job.objects))
        if outcome.state is DownloadState.CANCELLED:
            with self._lock:
                if self._jobs.get(job.key) is job:
                    del self._jobs[job.key]  # a later request may try again
            cancel.check()  # the caller cancelled: say so
            # stopped by `stop_downloads`/`close`: for this caller the file is just not there
            return Located(None, tuple(tried), download=outcome)
        tried.extend(a.url for a in outcome.attempts)
        if job.path is None:
            return Located(None, tuple(tried), download=outcome)
        return Located(str(job.path), tuple(tried), "symbol server", outcome, job.matched_by)

    # ---- prefetching ----------------------------------------------------------------------

    def prefetch(self, modules: Iterable[ModuleIdentity]) -> int:
        """Queue downloads for these modules (in this order) unless found locally; how many were queued."""
        if self.options.offline or not (self.servers or self.debuginfod):
            return 0
        queued = 0
        for module in modules:
            key = module_key(module)
            with self._lock:
                if key in self._jobs:
                    continue
            in_paths = self._local_objects(module, NEVER, on_machine=False)[0]
            if self.locate(module).path is not None or in_paths:
                continue
            lookups = lookups_for(module) + object_lookups_for(module, debuginfod=bool(self.debuginfod))
            if any(self.download_cache.find(lookup) is not None for lookup in lookups):
                continue
            safe = tuple(lookup for lookup in lookups if lookup.unsafe_reason is None)
            if safe:
                self._submit(key, safe, _PREFETCH)
                queued += 1
        return queued

    # ---- statuses ------------------------------------------------------------------------

    @property
    def download_version(self) -> int:
        """The number `download_statuses` returns, without copying them (for a cheap "anything new?")."""
        return self._version  # one int read: atomic, no lock needed for a hint

    def download_statuses(self) -> tuple[int, dict[ModuleKey, DownloadStatus]]:
        """(a number that grows with every change, every module's latest download status)."""
        with self._lock:
            return self._version, dict(self._statuses)

    @property
    def max_concurrent(self) -> int:
        """The most downloads that ran at the same time so far (for tests and benchmarks)."""
        return self._max_active

    def _set_status(self, key: ModuleKey, status: DownloadStatus) -> None:
        with self._lock:
            self._statuses[key] = status
            self._version += 1

    def _drop_status(self, key: ModuleKey) -> None:
        with self._lock:
            if self._statuses.pop(key, None) is not None:
                self._version += 1

    # ---- the pool ---------------------------------------------------------------------------

    def _submit(self, key: ModuleKey, lookups: tuple[SymbolLookup, ...], priority: int) -> _Job:
        with self._lock:
            job = self._jobs.get(key)
            if job is None:
                job = self._jobs[key] = _Job(key, lookups)
                if self._closed:
                    job.status = DownloadStatus(DownloadState.CANCELLED)
                    job.done.set()
                    return job
                self._statuses[key] = DownloadStatus(DownloadState.QUEUED)
                self._version += 1
            elif job.started or priority != _URGENT:
                return job
            # An urgent request for a queued job queues it again in front; the worker
            # that takes the older entry later sees it started and skips it.
            self._queue.put((priority, next(self._order), job))
            if len(self._workers) < max(1, self.options.parallel) and not self._closed:
                worker = threading.Thread(
                    target=self._work, name=f"symbol-download-{len(self._workers)}", daemon=True
                )
                self._workers.append(worker)
                worker.start()
        return job

    def _work(self) -> None:
        while True:
            _, _, job = self._queue.get()
            if job is None:
                return
            with self._lock:
                if job.started:
                    continue
                job.started = True
            try:
                if self._abort.cancelled:
                    job.status = DownloadStatus(DownloadState.CANCELLED)
                else:
                    job.path, job.status = self._download(job)
            except Exception as exc:  # a bug of ours must not leave the walk waiting forever
                log.exception("symbol download failed")
                job.status = DownloadStatus(DownloadState.FAILED, reason=f"internal error: {exc}")
            finally:
                if job.status is None:
                    job.status = DownloadStatus(DownloadState.FAILED, reason="internal error")
                if job.status.state is DownloadState.CANCELLED:
                    # stopped (`stop_downloads`): as if it had never been queued, even when this
                    # worker ends after `stop_downloads` has cleared the statuses
                    self._drop_status(job.key)
                else:
                    self._set_status(job.key, job.status)
                job.done.set()

    def _fetcher_for_run(self) -> HttpFetcher:
        with self._lock:
            if self._fetcher is None:
                self._fetcher = HttpFetcher(self.options.fetch, max_connections=max(1, self.options.parallel))
            return self._fetcher

    def _download(self, job: _Job) -> tuple[Path | None, DownloadStatus]:
        """Ask each server for each lookup in turn; the first file found wins."""
        with self._lock:
            self._active += 1
            self._max_active = max(self._max_active, self._active)
        try:
            return self._download_from_servers(job)
        finally:
            with self._lock:
                self._active -= 1

    def _download_from_servers(self, job: _Job) -> tuple[Path | None, DownloadStatus]:
        """`.sym` files from each symbol server (then the PDB/PE in Microsoft's layout); then debuginfod.

        The first `.sym` found wins. Binaries and debug files are all kept (a debug file for
        the names, the binary for the CFI) and make the module's symbols together.
        """
        code_file, code_id = job.key[0], job.key[1]
        attempts: list[ServerAttempt] = []
        failure: str | None = None
        started = time.monotonic()
        rounds: list[tuple[SymbolServer, list[SymbolLookup]]] = [
            (server, [lookup for lookup in job.lookups if lookup.kind not in ("debuginfo", "executable")])
            for server in self.servers
        ]
        rounds += [
            (server, [lookup for lookup in job.lookups if lookup.kind in ("debuginfo", "executable")])
            for server in self.debuginfod
        ]
        for server, lookups in rounds:
            for lookup in lookups:
                if lookup.kind in ("debuginfo", "executable"):
                    url = f"{server.url.rstrip('/')}/buildid/{lookup.components[1].lower()}/{lookup.kind}"
                elif lookup.kind == "debug id":
                    query = {"code_file": leafname(code_file), "code_id": code_id}
                    url = server_url(server.url, lookup.components, query)
                else:
                    url = server_url(server.url, lookup.components, None)
                shown = redacted(url)
                if self.download_cache.recently_missing(server.url, lookup):
                    attempts.append(ServerAttempt(shown, "not found (remembered)"))
                    continue
                outcome = self._fetch_one(job, server, lookup, url, shown, attempts)
                if isinstance(outcome, DownloadStatus):
                    return None, outcome  # cancelled, or the cache cannot take files
                if isinstance(outcome, Path):
                    if lookup.kind not in OBJECT_KINDS:
                        job.matched_by = MatchedBy(lookup.kind)
                        return outcome, DownloadStatus(
                            DownloadState.DOWNLOADED,
                            url=shown,
                            attempts=tuple(attempts),
                            received=outcome.stat().st_size,
                            seconds=time.monotonic() - started,
                        )
                    job.objects.append(FoundObject(str(outcome), _origin(lookup), shown, _matched_by(lookup)))
                    then = pdb_lookup_through_pe(job.key, outcome) if lookup.kind == "pe" else None
                    if then is not None and then not in lookups:
                        lookups.append(then)  # asked next, of this server
                    continue
                if outcome is not None:  # a failure (not a "not found")
                    failure = failure or outcome
                    break  # the next lookups are for files the server does not have, not for errors
            if job.objects and lookups and lookups[-1].kind in OBJECT_KINDS:
                break  # this server had the module's objects: the next ones are not asked
        if job.objects:
            return None, DownloadStatus(
                DownloadState.DOWNLOADED,
                url=job.objects[0].url,
                attempts=tuple(attempts),
                received=sum(os.path.getsize(o.path) for o in job.objects if os.path.exists(o.path)),
                seconds=time.monotonic() - started,
            )
        state = DownloadState.NOT_ON_SERVER if failure is None else DownloadState.FAILED
        return None, DownloadStatus(
            state, reason=failure, attempts=tuple(attempts), seconds=time.monotonic() - started
        )

    def _fetch_one(  # noqa: PLR0917 - one request's context
        self,
        job: _Job,
        server: SymbolServer,
        lookup: SymbolLookup,
        url: str,
        shown: str,
        attempts: list[ServerAttempt],
    ) -> Path | str | DownloadStatus | None:
        """One request: the file (Path), a failure reason (str), None (not found) or a final status."""
        cache = self.download_cache
        fetcher = self._fetcher_for_run()
        self._set_status(job.key, DownloadStatus(DownloadState.DOWNLOADING, url=shown))

        def progress(received: int, total: int | None) -> None:
            status = DownloadStatus(DownloadState.DOWNLOADING, url=shown, received=received, total=total)
            self._set_status(job.key, status)

        try:
            with cache.writer(lookup) as pending:
                result = fetcher.fetch(url, server, pending.file, cancel=self._abort, progress=progress)
                if result.outcome is FetchOutcome.FOUND:
                    path = cache.commit(pending, shown, object_file=lookup.kind in OBJECT_KINDS)
                    attempts.append(ServerAttempt(shown, "found"))
                    log.info("downloaded %s (%d bytes)", shown, result.size)
                    return path
        except Cancelled:
            return DownloadStatus(DownloadState.CANCELLED, attempts=tuple(attempts))
        except (UnsafePath, OSError) as exc:
            # the cache cannot take the file: no other server will change that
            reason = f"cannot write to the symbol cache: {exc}"
            attempts.append(ServerAttempt(shown, "failed", reason))
            return DownloadStatus(DownloadState.FAILED, reason=reason, attempts=tuple(attempts))
        if result.outcome is FetchOutcome.NOT_FOUND:
            cache.remember_missing(server.url, lookup, shown)
            attempts.append(ServerAttempt(shown, "not found", result.reason))
            return None
        log.warning("symbol download failed: %s: %s", shown, result.reason)
        attempts.append(ServerAttempt(shown, "failed", result.reason))
        return result.reason or "failed"

    # ---- the end ----------------------------------------------------------------------------

    def stop_downloads(self) -> None:
        """Stop downloads still running or queued (their partial files are removed, their statuses
        dropped: a prefetch nobody needed in the end is as if it had never been queued)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            workers = list(self._workers)
        self._abort.cancel()
        for _ in workers:
            self._queue.put((_URGENT - 1, -1, None))
        # A worker blocked on a silent server wakes at its read timeout, sees the abort and
        # removes its partial file by itself: do not hold the caller (a Cancel click) for it.
        deadline = time.monotonic() + 0.5
        for worker in workers:
            worker.join(timeout=max(0.0, deadline - time.monotonic()))
        with self._lock:
            for key, job in self._jobs.items():
                if not job.done.is_set() or job.status is None or not job.status.state.settled:
                    job.status = DownloadStatus(DownloadState.CANCELLED)
                    self._statuses.pop(key, None)
                    self._version += 1
                    job.done.set()

    def close(self) -> None:
        """Stop downloads (`stop_downloads`) and remove the temporary cache, if any; keep a real one."""
        self.stop_downloads()
        if self._fetcher is not None:
            self._fetcher.close()
        if self._temp_root is not None:
            shutil.rmtree(self._temp_root, ignore_errors=True)
            self._temp_root = None


def _matched_by(lookup: SymbolLookup) -> MatchedBy:
    """A PE asked for by `<name>/<TIMESTAMP><SIZE>/` is the module's by its code id; the rest by debug id."""
    return MatchedBy.CODE_ID if lookup.kind == "pe" else MatchedBy.DEBUG_ID


def _origin(lookup: SymbolLookup) -> str:
    return "debuginfod" if lookup.kind in ("debuginfo", "executable") else "symbol server"
