"""Batch triage: Socorro signatures of many dumps, grouped, computed in parallel.

* `triage_dump(path, TriageOptions(...)) -> CrashTriage` — the one per-dump function
  (`dump`): walk, rust-minidump JSON, `siggen` signature, crash, top frames, modules
  missing symbols, problems; never raises for a bad dump.
* `find_dumps(inputs)` — dumps named or found in folders by content (`discover`;
  `dump_kind` decides what is a dump).
* `run_batch(found, options, workers=, scheduler=)` — every dump, in this process,
  in worker processes or on a Dask cluster, yielding results as they come (`parallel`).
* `CrashSet`, `group_crashes`, `SignatureGroup` — the results in found order, grouped
  by signature, biggest first (`crash_set`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from inspector.core.lazy import lazy_names

# Each name is imported from its module on first use: importing one module of this package no
# longer imports all of them (start-up of a headless stackwalk; `inspector.core.lazy`).
__getattr__ = lazy_names(
    __name__,
    {
        "crash_set": (
            "CrashSet",
            "SignatureGroup",
            "group_crashes",
        ),
        "discover": (
            "DUMP_SUFFIXES",
            "FoundDump",
            "dump_kind",
            "find_dumps",
            "holds_dumps",
        ),
        "dump": (
            "CrashTriage",
            "TriageOptions",
            "release_shared",
            "signature_of",
            "triage_chunk",
            "triage_dump",
        ),
        "parallel": (
            "ClusterUnavailable",
            "plan_chunks",
            "run_batch",
        ),
    },
)

if TYPE_CHECKING:  # the same names, for type checkers
    from inspector.core.triage.crash_set import CrashSet, SignatureGroup, group_crashes
    from inspector.core.triage.discover import DUMP_SUFFIXES, FoundDump, dump_kind, find_dumps, holds_dumps
    from inspector.core.triage.dump import (
        CrashTriage,
        TriageOptions,
        release_shared,
        signature_of,
        triage_chunk,
        triage_dump,
    )
    from inspector.core.triage.parallel import ClusterUnavailable, plan_chunks, run_batch

__all__ = [
    "DUMP_SUFFIXES",
    "ClusterUnavailable",
    "CrashSet",
    "CrashTriage",
    "FoundDump",
    "SignatureGroup",
    "TriageOptions",
    "dump_kind",
    "find_dumps",
    "group_crashes",
    "holds_dumps",
    "plan_chunks",
    "release_shared",
    "run_batch",
    "signature_of",
    "triage_chunk",
    "triage_dump",
]
