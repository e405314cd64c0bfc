"""One dump → a `CrashTriage`: its signature, crash, top frames and what was missing.

`triage_dump(path, options)` is the one per-dump function the `triage` command, its
worker processes, Dask workers and the window's Crash Set view all call. It walks the
dump with the engine (`inspector.core.process.process`), builds our rust-minidump
JSON (`json_document`) and hands it to Socorro's signature generation (`siggen`), exactly
as Socorro does with minidump-stackwalk's output: `convert_to_crash_data({"json_dump":
…})`, then `SignatureGenerator().generate(…)`. The result is small, frozen and
picklable, so it travels back from a worker process or a Dask worker as it is.

A dump that cannot be read is not an error here: its result's signature says so
(`unreadable dump (NotAMinidump)`, one group per kind of failure) and its problems hold
the message, so a batch goes on.

Between calls a process keeps one `Triager` per options (the last one used): its
`KeptSymbolSupplier` keeps every symbol file it opened mapped and indexed, so the next
dump of the same build finds its modules' symbols ready. With symbol servers each dump
gets its own server supplier (downloads and indexes are kept in the caches on disk).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from inspector.core.cancel import NEVER, CancelToken
from inspector.core.errors import Cancelled, InspectorError
from inspector.core.logs import get_logger
from inspector.core.process import ProcessOptions, ProcessState, process
from inspector.core.record import Record, replace
from inspector.core.symbols import KeptSymbolSupplier
from inspector.core.types import format_address

if TYPE_CHECKING:
    from inspector.core.report.json_report import JsonValue
    from inspector.core.symbols.server_supplier import SymbolServerOptions
    from inspector.core.unwind import CallStack

log = get_logger(__name__)

#: How many frames (inline frames counted) of the signature's thread a result keeps.
TOP_FRAMES = 10


class TriageOptions(Record):
    """What every dump of a batch is walked with (picklable: it travels to the workers).

    `symbol_paths`: symbol folders or `.sym` files, as seen by the process that walks
    (absolute paths for workers elsewhere). `index_cache`: the folder of symbol indexes
    (None: the user cache folder; `use_index_cache=False`: none). `symbol_urls`: symbol
    servers, tried after the paths, downloads kept in `download_cache` (None: the user cache
    folder), `offline`: download nothing; each worker reads the servers' tokens from its own
    environment. `servers`: server options given as they are instead (the window, whose
    tokens come from its preferences, for its own worker processes).
    """

    symbol_paths: tuple[str, ...] = ()
    index_cache: str | None = None
    use_index_cache: bool = True
    symbol_urls: tuple[str, ...] = ()
    download_cache: str | None = None
    offline: bool = False
    servers: SymbolServerOptions | None = None

    @classmethod
    def with_cache_root(
        cls,
        symbol_paths: Iterable[str],
        *,
        cache_root: str | None = None,
        symbol_urls: Iterable[str] = (),
        offline: bool = False,
    ) -> TriageOptions:
        """The command line's `--symbols-cache DIR`: indexes in `DIR/index`, downloads in `DIR/symbols`."""
        return cls(
            symbol_paths=tuple(symbol_paths),
            index_cache=None if cache_root is None else os.path.join(cache_root, "index"),
            symbol_urls=tuple(symbol_urls),
            download_cache=None if cache_root is None else os.path.join(cache_root, "symbols"),
            offline=offline,
        )

    @property
    def uses_servers(self) -> bool:
        if self.servers is not None:
            return self.servers.enabled
        return bool(self.symbol_urls) or self.offline

    def process_options(self) -> ProcessOptions:
        servers = self.servers
        if servers is None and self.uses_servers:  # the HTTP machinery is imported only then
            from inspector.core.symbols.server_supplier import server_options_for

            servers = server_options_for(
                self.symbol_urls, downloads=self.download_cache, offline=self.offline
            )
        return ProcessOptions(
            symbol_paths=self.symbol_paths,
            symbols_cache=self.index_cache,
            use_symbols_cache=self.use_index_cache,
            symbol_servers=servers,
        )


class CrashTriage(Record):
    """What triage needs of one dump. `to_json()` is its entry in the `triage --json` document.

    `crash_reason` and `crash_address` are empty when the dump records no exception;
    `crashing_thread` is None then. `top_frames` are the first frames (inline frames
    first, as in the human report) of the thread the signature was made from: the
    crashing thread, or the first thread when there is none (as Socorro does).
    `modules_missing_symbols`: modules holding one of that thread's frames whose
    symbols were not loaded. `readable` is False when the dump could not be read at all.
    """

    dump: str
    signature: str
    crash_reason: str = ""
    crash_address: str = ""
    crashing_thread: int | None = None
    top_frames: tuple[str, ...] = ()
    modules_missing_symbols: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    readable: bool = True

    def to_json(self) -> dict[str, JsonValue]:
        return {
            "dump": self.dump,
            "signature": self.signature,
            "crash_reason": self.crash_reason,
            "crash_address": self.crash_address,
            "crashing_thread": self.crashing_thread,
            "top_frames": list(self.top_frames),
            "modules_missing_symbols": list(self.modules_missing_symbols),
            "problems": list(self.problems),
        }


def unreadable(dump: str, code: str, message: str) -> CrashTriage:
    """The result for a dump that could not be read: grouped by the kind of failure."""
    return CrashTriage(dump, f"unreadable dump ({code})", problems=(message,), readable=False)


# ---- signatures ------------------------------------------------------------------------------


class _Signatures:
    """siggen's generator, made once per process (building its rule pipeline reads its lists)."""

    _lock = threading.Lock()
    _generator: Any = None

    @classmethod
    def generate(cls, json_dump: dict[str, JsonValue]) -> str:
        from siggen.utils import convert_to_crash_data

        with cls._lock:
            if cls._generator is None:
                from siggen.generator import SignatureGenerator

                cls._generator = SignatureGenerator()
            generator = cls._generator
        result = generator.generate(convert_to_crash_data({"json_dump": json_dump}))
        signature: str = result.signature
        return signature


#: What triaging a dump imports on first use: the reports, the crash analysis and its decoders.
_FIRST_USE_MODULES = (
    "inspector.core.report.frame_text",
    "inspector.core.report.json_report",
    "inspector.core.analysis.from_dump",
    "iced_x86",
    "capstone",
)


def preload() -> None:
    """Import what triaging a dump needs and build siggen's generator now: worker processes
    forked afterwards start with them instead of each paying for them."""
    import importlib

    for module in _FIRST_USE_MODULES:
        importlib.import_module(module)
    _Signatures.generate({})


def signature_of(json_dump: dict[str, JsonValue]) -> str:
    """Socorro's signature of a rust-minidump JSON document (ours, or minidump-stackwalk's)."""
    return _Signatures.generate(json_dump)


# ---- one dump --------------------------------------------------------------------------------


class Triager:
    """Triages dumps one after another with the same options, keeping symbol files open between them."""

    def __init__(self, options: TriageOptions) -> None:
        self.options = options
        self._process_options = options.process_options()
        # With servers each dump gets a server supplier of its own (see the module docstring).
        self._supplier = (
            None
            if options.uses_servers
            else KeptSymbolSupplier(
                options.symbol_paths, cache=self._process_options.index_cache(), code_id_fallback=False
            )
        )
        self._lock = threading.Lock()  # one dump at a time: the kept files are trimmed between dumps

    def triage(self, path: str | os.PathLike[str], *, cancel: CancelToken = NEVER) -> CrashTriage:
        """The dump's triage; never raises for a bad dump (only `Cancelled`)."""
        name = os.fspath(path)
        with self._lock:
            try:
                state = process(name, self._process_options, cancel=cancel, supplier=self._supplier)
                return summarize(name, state)
            except Cancelled:
                raise
            except InspectorError as exc:
                message = str(exc)  # the reader names the file first; the result names it already
                message = message.removeprefix(f"{os.path.normpath(name)}: ")
                return unreadable(name, exc.code, message)
            except Exception as exc:  # a bug of ours on strange input must not stop a batch
                log.debug("triage of %s failed", name, exc_info=True)
                return unreadable(
                    name,
                    "internal error",
                    f"internal error ({type(exc).__name__}: {exc}); please report it",
                )
            finally:
                if self._supplier is not None:
                    self._supplier.trim()

    def close(self) -> None:
        with self._lock:
            if self._supplier is not None:
                self._supplier.close()


def summarize(dump: str, state: ProcessState) -> CrashTriage:
    """A walked dump's triage: the signature of its JSON, its crash and its top frames."""
    from inspector.core.report.json_report import json_document

    document = json_document(state)
    width = state.system.pointer_width
    crash = state.crash
    # the thread siggen makes the signature from: the crashing one, else the first
    index = state.requesting_thread if state.requesting_thread is not None else 0
    stack = state.threads[index] if index < len(state.threads) else None
    return CrashTriage(
        dump=dump,
        signature=signature_of(document),
        crash_reason="" if crash is None else crash.reason,
        crash_address="" if crash is None else format_address(crash.address, width),
        crashing_thread=state.requesting_thread,
        top_frames=() if stack is None else _top_frames(stack),
        modules_missing_symbols=() if stack is None else _missing_symbols(state, stack),
        problems=tuple(f"{p.code}: {p.message}" for p in state.problems),
    )


def _top_frames(stack: CallStack) -> tuple[str, ...]:
    from inspector.core.report.frame_text import frame_label, inline_label

    out: list[str] = []
    for frame in stack.frames:
        out.extend(inline_label(frame, inline) for inline in frame.inlines)
        out.append(frame_label(frame))
        if len(out) >= TOP_FRAMES:
            break
    return tuple(out[:TOP_FRAMES])


def _missing_symbols(state: ProcessState, stack: CallStack) -> tuple[str, ...]:
    names: dict[str, None] = {}
    for frame in stack.frames:
        if frame.module_index is None or frame.module_index >= len(state.modules):
            continue
        entry = state.modules[frame.module_index]
        if not entry.symbols.loaded:
            names[entry.module.filename] = None
    return tuple(names)


class _Shared:
    """The process's kept `Triager`: the one of the last options `triage_dump` was called with."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._triager: Triager | None = None

    def get(self, options: TriageOptions) -> Triager:
        with self._lock:
            triager = self._triager
            if triager is None or triager.options != options:
                if triager is not None:
                    triager.close()
                triager = self._triager = Triager(options)
            return triager

    def release(self) -> None:
        with self._lock:
            triager, self._triager = self._triager, None
        if triager is not None:
            triager.close()


_SHARED = _Shared()


def triage_dump(
    path: str | os.PathLike[str], options: TriageOptions | None = None, *, cancel: CancelToken = NEVER
) -> CrashTriage:
    """Triage one dump (see the module docstring); never raises for a bad dump (only `Cancelled`).

    The process keeps the `Triager` of the last options it was called with, so a worker
    that triages many dumps opens each symbol file once; other options replace it.
    """
    return _SHARED.get(options or TriageOptions()).triage(path, cancel=cancel)


def release_shared() -> None:
    """Close the process's kept `Triager` (its symbol files) until the next `triage_dump`."""
    _SHARED.release()


def triage_chunk(items: list[tuple[int, str]], options: TriageOptions) -> list[tuple[int, CrashTriage]]:
    """A worker's task: `triage_dump` on each (index, path), results tagged with their index."""
    return [(index, triage_dump(path, options)) for index, path in items]


def renamed(result: CrashTriage, dump: str) -> CrashTriage:
    """The result under the path the dump was found at (workers get absolute paths)."""
    return result if result.dump == dump else replace(result, dump=dump)
