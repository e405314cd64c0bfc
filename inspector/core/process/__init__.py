"""A dump and symbol paths → `ProcessState` (every thread walked), as a generator of events.

By job: `options` (what to process with), `state` (the frozen result), `events` (what
`process_events` yields), `driver` (the run: reading, walking every thread, on a helper
thread with symbol servers), `start` (the state before any walk, where each walk starts),
`prefetch` (modules to download ahead), `tracker` (symbol and download states as events),
`problems` (what only the end of the walk can tell). See `driver` for the order of events.
"""

from __future__ import annotations

from inspector.core.lazy import lazy_names

# Each name is imported from its module on first use: importing one module of this package no
# longer imports all of them (start-up of a headless stackwalk; `inspector.core.lazy`).
__getattr__ = lazy_names(
    __name__,
    {
        "driver": (
            "process",
            "process_events",
        ),
        "events": (
            "DumpLoaded",
            "Finished",
            "FrameWalked",
            "ProcessEvent",
            "Progress",
            "SymbolsLoaded",
            "ThreadWalked",
        ),
        "options": ("ProcessOptions",),
        "state": (
            "NOT_REQUESTED",
            "UNKNOWN_SYSTEM",
            "ContextSource",
            "CrashSummary",
            "LsbRelease",
            "ModuleEntry",
            "ModuleSymbolSummary",
            "Problem",
            "ProcessState",
            "SymbolState",
            "SystemSummary",
            "ThreadStart",
            "last_error_name",
        ),
    },
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:  # the same names, for type checkers
    from inspector.core.process.driver import process, process_events
    from inspector.core.process.events import (
        DumpLoaded,
        Finished,
        FrameWalked,
        ProcessEvent,
        Progress,
        SymbolsLoaded,
        ThreadWalked,
    )
    from inspector.core.process.options import ProcessOptions
    from inspector.core.process.state import (
        NOT_REQUESTED,
        UNKNOWN_SYSTEM,
        ContextSource,
        CrashSummary,
        LsbRelease,
        ModuleEntry,
        ModuleSymbolSummary,
        Problem,
        ProcessState,
        SymbolState,
        SystemSummary,
        ThreadStart,
        last_error_name,
    )

__all__ = [
    "NOT_REQUESTED",
    "UNKNOWN_SYSTEM",
    "ContextSource",
    "CrashSummary",
    "DumpLoaded",
    "Finished",
    "FrameWalked",
    "LsbRelease",
    "ModuleEntry",
    "ModuleSymbolSummary",
    "Problem",
    "ProcessEvent",
    "ProcessOptions",
    "ProcessState",
    "Progress",
    "SymbolState",
    "SymbolsLoaded",
    "SystemSummary",
    "ThreadStart",
    "ThreadWalked",
    "last_error_name",
    "process",
    "process_events",
]
