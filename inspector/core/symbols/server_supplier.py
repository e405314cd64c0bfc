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
import logging
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
from inspector.core.record import field, record
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
from inspector.core.symbols.identity import MatchedBy
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
from inspector.core.types import ModuleIdentity

log = logging.getLogger(__name__)


@record
class SymbolServerOptions:
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
    offline: bool = False
    fetch: FetchPolicy = field(default_factory=FetchPolicy)
    parallel: int = 4
    prefetch: bool = True
    negative_ttl: float = 24 * 3600
    partial_dir: str | os.PathLike[str] | None = None

    @property
    def enabled(self) -> bool:
        return bool(self.servers) or self.cache_dir is not None


def server_options_for(
    urls: Iterable[str],
    *,
    downloads: str | os.PathLike[str] | None = None,
    keep_downloads: bool = True,
    partial_dir: str | os.PathLike[str] | None = None,
    offline: bool = False,
    fetch: FetchPolicy | None = None,
    environ: Mapping[str, str] | None = None,
) -> SymbolServerOptions | None:
    """What the headless commands' `--symbols-url`, `--offline` and `--symbols-cache` mean.

    None when there is neither a server nor `offline`. Downloads are kept in `downloads`
    (None: the user cache folder; `keep_downloads=False`: a temporary folder), written first
    in `partial_dir` (None: `.partial/` inside the cache). Each server's
    token is read from `environ` (default: this process's environment), so a batch worker
    on another machine uses its own and no token travels with the work.
    """
    urls = tuple(urls)
    if not urls and not offline:
        return None
    from inspector.core.symbols.cache import default_download_directory
    from inspector.core.symbols.http_fetch import token_from_environment

    environ = os.environ if environ is None else environ
    folder: Path | None = None
    if keep_downloads:
        folder = Path(downloads) if downloads is not None else default_download_directory()
    return SymbolServerOptions(
        servers=tuple(SymbolServer(url, token_from_environment(url, environ)) for url in urls),
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


class _Job:
    __slots__ = ("done", "key", "lookups", "matched_by", "path", "started", "status")

    def __init__(self, key: ModuleKey, lookups: tuple[SymbolLookup, ...]) -> None:
        self.key = key
        self.lookups = lookups
        self.started = False
        self.done = threading.Event()
        self.path: Path | None = None
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
    ) -> None:
        super().__init__(symbol_paths, cache=cache, code_id_fallback=code_id_fallback)
        self.options = servers
        self.servers = tuple(s for s in servers.servers if s.problem() is None)
        bad = [PathProblem(redacted(s.url), p) for s in servers.servers if (p := s.problem()) is not None]
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

    def _find(self, module: ModuleIdentity, cancel: CancelToken) -> Located:
        local = self.locate(module, cancel)
        if local.path is not None:
            return local
        lookups = lookups_for(module)
        tried = list(local.tried)
        with self._lock:
            queued = self._jobs.get(module_key(module))
        if queued is not None:  # a prefetch (maybe done already): its outcome, not "cached"
            return self._await(queued, tried, cancel)
        for lookup in lookups:
            cached = self.download_cache.find(lookup)
            with contextlib.suppress(UnsafePath):  # an unsafe name was never looked for
                tried.append(str(self.download_cache.path_for(lookup)))
            if cached is not None:
                status = DownloadStatus(DownloadState.CACHED)
                return Located(cached, tuple(tried), "download cache", status, MatchedBy(lookup.kind))
        if not lookups:
            return local
        safe = tuple(lookup for lookup in lookups if lookup.unsafe_reason is None)
        if not safe:
            reason = f"unsafe file name: {lookups[0].unsafe_reason}"
            status = DownloadStatus(DownloadState.FAILED, reason=reason)
            self._set_status(module_key(module), status)
            return Located(None, tuple(tried), download=status)
        if self.options.offline or not self.servers:
            status = DownloadStatus(DownloadState.OFFLINE)
            if self.servers:
                self._set_status(module_key(module), status)
            return Located(None, tuple(tried), download=status if self.servers else None)
        return self._await(self._submit(module_key(module), safe, _URGENT), tried, cancel)

    def _await(self, job: _Job, tried: list[str], cancel: CancelToken) -> Located:
        if not job.done.is_set():
            self._submit(job.key, job.lookups, _URGENT)  # to the front of the queue
        while not job.done.wait(0.05):
            cancel.check()
        outcome = job.status
        assert outcome is not None
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
        return Located(job.path, tuple(tried), "symbol server", outcome, job.matched_by)

    # ---- prefetching ----------------------------------------------------------------------

    def prefetch(self, modules: Iterable[ModuleIdentity]) -> int:
        """Queue downloads for these modules (in this order) unless found locally; how many were queued."""
        if self.options.offline or not self.servers:
            return 0
        queued = 0
        for module in modules:
            key = module_key(module)
            with self._lock:
                if key in self._jobs:
                    continue
            if self.locate(module).path is not None:
                continue
            lookups = lookups_for(module)
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
        cache = self.download_cache
        fetcher = self._fetcher_for_run()
        code_file, code_id = job.key[0], job.key[1]
        attempts: list[ServerAttempt] = []
        failure: str | None = None
        started = time.monotonic()
        for server in self.servers:
            for lookup in job.lookups:
                query = None
                if lookup.kind == "debug id":
                    query = {"code_file": leafname(code_file), "code_id": code_id}
                url = server_url(server.url, lookup.components, query)
                shown = redacted(url)
                if cache.recently_missing(server.url, lookup):
                    attempts.append(ServerAttempt(shown, "not found (remembered)"))
                    continue
                self._set_status(job.key, DownloadStatus(DownloadState.DOWNLOADING, url=shown))

                def progress(received: int, total: int | None, shown: str = shown) -> None:
                    status = DownloadStatus(
                        DownloadState.DOWNLOADING, url=shown, received=received, total=total
                    )
                    self._set_status(job.key, status)

                try:
                    with cache.writer(lookup) as pending:
                        sink = pending.file
                        result = fetcher.fetch(url, server, sink, cancel=self._abort, progress=progress)
                        if result.outcome is FetchOutcome.FOUND:
                            path = cache.commit(pending, shown)
                            job.matched_by = MatchedBy(lookup.kind)
                            attempts.append(ServerAttempt(shown, "found"))
                            log.info("downloaded %s (%d bytes)", shown, result.size)
                            return path, DownloadStatus(
                                DownloadState.DOWNLOADED,
                                url=shown,
                                attempts=tuple(attempts),
                                received=result.size,
                                seconds=time.monotonic() - started,
                            )
                except Cancelled:
                    return None, DownloadStatus(DownloadState.CANCELLED, attempts=tuple(attempts))
                except (UnsafePath, OSError) as exc:
                    # the cache cannot take the file: no other server will change that
                    reason = f"cannot write to the symbol cache: {exc}"
                    attempts.append(ServerAttempt(shown, "failed", reason))
                    return None, DownloadStatus(DownloadState.FAILED, reason=reason, attempts=tuple(attempts))
                if result.outcome is FetchOutcome.NOT_FOUND:
                    cache.remember_missing(server.url, lookup, shown)
                    attempts.append(ServerAttempt(shown, "not found", result.reason))
                else:
                    log.warning("symbol download failed: %s: %s", shown, result.reason)
                    attempts.append(ServerAttempt(shown, "failed", result.reason))
                    failure = failure or result.reason
                    break  # the code-id lookup is for files the server does not have, not for errors
        state = DownloadState.NOT_ON_SERVER if failure is None else DownloadState.FAILED
        return None, DownloadStatus(
            state, reason=failure, attempts=tuple(attempts), seconds=time.monotonic() - started
        )

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
