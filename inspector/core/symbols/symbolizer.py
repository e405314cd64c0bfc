"""Per-process symbol state: one `SymbolFile` per module, located and loaded once, shared by all threads.

The stackwalker calls, for a module (anything with the `ModuleIdentity`
fields) and a module-relative address:

* `lookup(module, rel) -> FrameSymbol | None` — what rust-minidump's
  `fill_symbol` fills for a frame (function, base, parameter size, source
  file/line/line base, inline frames innermost first); None when the module
  has no symbols or nothing covers the address.
* `find_cfi(module, rel) -> CfiLookup | None` — the STACK CFI block and rules in force.
* `find_stack_win(module, rel) -> StackWinRecord | None` — FRAME_DATA before FPO.
* `has_symbol_at(module, rel) -> bool | None` — for stack scanning: True/False
  when the module has symbols (a FUNC or PUBLIC with a non-empty name resolves
  there or not), None when it has none (rust-minidump then accepts the
  candidate: "no symbols" must not make scanning impossible).
* `status(module) -> ModuleSymbols` — loads on first use; `statuses()` lists
  every module asked about so far, `progress` counts requested/loaded.

The first call for a module locates and opens its file (under a per-module
lock, so concurrent callers wait for one load); later calls reuse it. A
`CancelToken` given to the constructor is checked before each load; a
cancelled load raises `Cancelled` and is retried on the next request.
The modules' files stay open until `close()`.
"""

from __future__ import annotations

import _thread

from inspector.core.cancel import NEVER, CancelToken
from inspector.core.record import Record
from inspector.core.symbols.records import CfiLookup, FrameSymbol, StackWinRecord
from inspector.core.symbols.supplier import ModuleSymbols, SymbolSupplier

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    from inspector.core.module_identity import ModuleIdentity

#: rust-minidump's ModuleKey: (code file, code id, debug file, debug id)
ModuleKey = tuple[str, str, str, str]


def module_key(module: ModuleIdentity) -> ModuleKey:
    return (module.code_file, module.code_id, module.debug_file, module.debug_id)


class SymbolProgress(Record):
    """Modules whose symbols were asked for, and how many of those loads have finished."""

    requested: int
    loaded: int


class _Entry:
    __slots__ = ("lock", "result")

    def __init__(self) -> None:
        self.lock = _thread.allocate_lock()
        self.result: ModuleSymbols | None = None


class Symbolizer:
    def __init__(
        self, supplier: SymbolSupplier, *, cancel: CancelToken = NEVER, owns_files: bool = True
    ) -> None:
        self.supplier = supplier
        self.cancel = cancel
        self.owns_files = owns_files
        self._entries: dict[ModuleKey, _Entry] = {}
        #: entries with a result, a count that only grows: progress displays compare it after every
        #: frame, without the lock (`progress` takes it for a consistent pair)
        self.loads_finished = 0
        self._lock = _thread.allocate_lock()

    # ---- what the stackwalker calls ------------------------------------------------

    def lookup(self, module: ModuleIdentity, address: int) -> FrameSymbol | None:
        symbols = self.status(module).symbol_file
        return None if symbols is None else symbols.symbolize(address)

    def find_cfi(self, module: ModuleIdentity, address: int) -> CfiLookup | None:
        symbols = self.status(module).symbol_file
        return None if symbols is None else symbols.find_cfi(address)

    def find_stack_win(self, module: ModuleIdentity, address: int) -> StackWinRecord | None:
        symbols = self.status(module).symbol_file
        return None if symbols is None else symbols.find_stack_win(address)

    def has_symbol_at(self, module: ModuleIdentity, address: int) -> bool | None:
        symbols = self.status(module).symbol_file
        return None if symbols is None else symbols.has_symbol_at(address)

    def status(self, module: ModuleIdentity) -> ModuleSymbols:
        """The module's symbols, loading them on the first request (thread-safe, once per module)."""
        key = (module.code_file, module.code_id, module.debug_file, module.debug_id)  # module_key, inlined
        entry = self._entries.get(key)
        if entry is not None and entry.result is not None:
            return entry.result
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                entry = self._entries[key] = _Entry()
        with entry.lock:
            if entry.result is None:
                entry.result = self.supplier.load(module, self.cancel)
                with self._lock:
                    self.loads_finished += 1
            return entry.result

    # ---- for progress displays and reports ---------------------------------------------

    @property
    def progress(self) -> SymbolProgress:
        with self._lock:
            return SymbolProgress(len(self._entries), self.loads_finished)

    def statuses(self) -> dict[ModuleKey, ModuleSymbols]:
        """Every module whose symbols have been loaded (or looked for) so far."""
        with self._lock:
            entries = list(self._entries.items())
        return {key: entry.result for key, entry in entries if entry.result is not None}

    def close(self) -> None:
        """Close every open symbol file, then the supplier (lookups afterwards are not allowed).

        Nothing when the files belong to the supplier (`owns_files=False`)."""
        if not self.owns_files:
            return
        for result in self.statuses().values():
            if result.symbol_file is not None:
                result.symbol_file.close()
        self.supplier.close()

    def __enter__(self) -> Symbolizer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
