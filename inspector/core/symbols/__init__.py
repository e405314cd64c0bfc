"""Breakpad `.sym` symbol files: parser, lazy index with an on-disk cache, supplier, postfix evaluator.

Depends only on `inspector.core.{types,errors,cancel}` (never on the minidump
reader, never on Qt), and does not import numpy: only the cold index builder
(`index_build`) does, when a file has no valid cached index.

Public API (the stackwalker's entry point is `Symbolizer`):

* `Symbolizer(supplier, cancel=)` — per-process state; `lookup`, `find_cfi`,
  `find_stack_win`, `has_symbol_at`, `status`, `statuses`, `progress`
  (see `symbolizer`).
* `SymbolSupplier(paths, cache=, code_id_fallback=)` — finds a module's file
  in symbol-store directories or single `.sym` files; `locate`, `load`,
  `problems` (see `supplier`). `KeptSymbolSupplier`: the same, keeping each module's
  file open across dumps (batch triage).
* `ServerSymbolSupplier(paths, SymbolServerOptions(servers=(SymbolServer(url, token),
  …), cache_dir=…))` — a `SymbolSupplier` that goes on to a download cache and symbol
  servers; `prefetch(modules)` downloads in parallel ahead of the walk;
  `download_statuses` (see `server_supplier`, `http_fetch`, `download_cache`; urllib3 is
  imported only when a download is about to happen).
* `identity` — `match(module, candidate)`: the one rule deciding that a `.sym` file, PE,
  ELF or PDB is a module's (debug id, else code file + code id; `MatchedBy`,
  `ObjectIdentity`, `SymbolMatch`); `StoreIndex` indexes a directory's `.sym` files by
  their MODULE / INFO CODE_ID lines for modules without a debug id (see `store_index`).
* `IndexCache(directory)` / `IndexCache.default()` — where indexes are kept
  (`platformdirs.user_cache_dir("crash-inspector")/symbol-index`); `None`
  directory = no cache.
* `SymbolFile.open(path, cache=)` — one file; `find_function`, `find_public`,
  `find_line`, `find_inlines`, `symbolize`, `has_symbol_at`, `find_cfi`,
  `find_stack_win`, `damage`, `check_all` (see `symbol_file`).
* `postfix` — `evaluate_cfi`, `evaluate_win`, `win_variables`,
  `parse_cfi_rules`, `compose_cfi_rules` with step-by-step traces.
* `records` — the frozen value types all of these return.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from inspector.core.symbols.cache import IndexCache, default_cache_directory, default_download_directory
from inspector.core.symbols.errors import IndexCacheError, SymbolFileUnreadable
from inspector.core.symbols.identity import MatchedBy, ObjectIdentity, SymbolMatch, match, pe_code_id
from inspector.core.symbols.postfix import (
    MemoryRead,
    PostfixResult,
    PostfixStep,
    compose_cfi_rules,
    evaluate_cfi,
    evaluate_win,
    parse_cfi_rules,
    win_variables,
)
from inspector.core.symbols.records import (
    CfiLookup,
    CfiRow,
    DamagedLine,
    DamageKind,
    DamageReport,
    DownloadState,
    DownloadStatus,
    FrameSymbol,
    FunctionRecord,
    InlineCall,
    InlineFrameSymbol,
    ModuleRecord,
    PublicRecord,
    RecordCounts,
    ServerAttempt,
    SourceLine,
    StackWinRecord,
    StackWinType,
    SymbolInfo,
)
from inspector.core.symbols.store_index import StoreIndex
from inspector.core.symbols.supplier import (
    KeptSymbolSupplier,
    Located,
    ModuleSymbols,
    PathProblem,
    SymbolStatus,
    SymbolSupplier,
)
from inspector.core.symbols.symbol_file import SymbolFile
from inspector.core.symbols.symbolizer import ModuleKey, Symbolizer, SymbolProgress, module_key

# The symbol-server machinery (HTTP, hashing of negative answers, the download cache) is loaded
# on first use only: a stackwalk without servers never pays for it (PEP 562).
_LAZY = {
    "DownloadCache": "inspector.core.symbols.download_cache",
    "unsafe_component_reason": "inspector.core.symbols.download_cache",
    "FetchPolicy": "inspector.core.symbols.http_fetch",
    "SymbolServer": "inspector.core.symbols.http_fetch",
    "token_from_environment": "inspector.core.symbols.http_fetch",
    "token_variable": "inspector.core.symbols.http_fetch",
    "ServerSymbolSupplier": "inspector.core.symbols.server_supplier",
    "SymbolServerOptions": "inspector.core.symbols.server_supplier",
}

if TYPE_CHECKING:
    from inspector.core.symbols.download_cache import DownloadCache, unsafe_component_reason
    from inspector.core.symbols.http_fetch import (
        FetchPolicy,
        SymbolServer,
        token_from_environment,
        token_variable,
    )
    from inspector.core.symbols.server_supplier import ServerSymbolSupplier, SymbolServerOptions


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "CfiLookup",
    "CfiRow",
    "DamageKind",
    "DamageReport",
    "DamagedLine",
    "DownloadCache",
    "DownloadState",
    "DownloadStatus",
    "FetchPolicy",
    "FrameSymbol",
    "FunctionRecord",
    "IndexCache",
    "IndexCacheError",
    "InlineCall",
    "InlineFrameSymbol",
    "KeptSymbolSupplier",
    "Located",
    "MatchedBy",
    "MemoryRead",
    "ModuleKey",
    "ModuleRecord",
    "ModuleSymbols",
    "ObjectIdentity",
    "PathProblem",
    "PostfixResult",
    "PostfixStep",
    "PublicRecord",
    "RecordCounts",
    "ServerAttempt",
    "ServerSymbolSupplier",
    "SourceLine",
    "StackWinRecord",
    "StackWinType",
    "StoreIndex",
    "SymbolFile",
    "SymbolFileUnreadable",
    "SymbolInfo",
    "SymbolMatch",
    "SymbolProgress",
    "SymbolServer",
    "SymbolServerOptions",
    "SymbolStatus",
    "SymbolSupplier",
    "Symbolizer",
    "compose_cfi_rules",
    "default_cache_directory",
    "default_download_directory",
    "evaluate_cfi",
    "evaluate_win",
    "match",
    "module_key",
    "parse_cfi_rules",
    "pe_code_id",
    "token_from_environment",
    "token_variable",
    "unsafe_component_reason",
    "win_variables",
]
