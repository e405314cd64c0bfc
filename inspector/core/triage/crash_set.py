"""A set of triaged dumps grouped by signature: what the `triage` outputs and the Crash Set view show.

Results arrive in any order (from parallel workers); `CrashSet` keeps them at the place
their dump was found, so every output lists crashes in the order found and groups the
same way whatever ran them: biggest group first, then by signature.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from inspector.core.record import Record
from inspector.core.triage.dump import CrashTriage

if TYPE_CHECKING:
    from inspector.core.report.json_report import JsonValue


class SignatureGroup(Record):
    """The dumps sharing a signature, in the order they were found."""

    signature: str
    crashes: tuple[CrashTriage, ...]

    @property
    def count(self) -> int:
        return len(self.crashes)

    @property
    def top_frames(self) -> tuple[str, ...]:
        """The first crash's top frames (the signature is made from the same frames in every crash)."""
        return self.crashes[0].top_frames

    @property
    def modules_missing_symbols(self) -> tuple[str, ...]:
        """Every module any of the group's crashes lacked symbols for, in first-seen order."""
        names: dict[str, None] = {}
        for crash in self.crashes:
            names.update(dict.fromkeys(crash.modules_missing_symbols))
        return tuple(names)

    def to_json(self) -> dict[str, JsonValue]:
        return {"signature": self.signature, "count": self.count, "dumps": [c.dump for c in self.crashes]}


def group_crashes(crashes: Sequence[CrashTriage]) -> list[SignatureGroup]:
    """Crashes grouped by signature: biggest group first, equal sizes by signature."""
    by_signature: dict[str, list[CrashTriage]] = {}
    for crash in crashes:
        by_signature.setdefault(crash.signature, []).append(crash)
    groups = [SignatureGroup(signature, tuple(members)) for signature, members in by_signature.items()]
    groups.sort(key=lambda group: (-group.count, group.signature))
    return groups


class CrashSet:
    """Results of a batch in the order their dumps were found (`size` places, filled as they come)."""

    def __init__(self, size: int) -> None:
        self._slots: list[CrashTriage | None] = [None] * size
        self.done = 0

    @property
    def size(self) -> int:
        return len(self._slots)

    def add(self, index: int, crash: CrashTriage) -> None:
        if self._slots[index] is None:
            self.done += 1
        self._slots[index] = crash

    def crashes(self) -> list[CrashTriage]:
        """The results so far, in the order found."""
        return [crash for crash in self._slots if crash is not None]

    def __iter__(self) -> Iterator[CrashTriage]:
        return iter(self.crashes())

    def groups(self) -> list[SignatureGroup]:
        return group_crashes(self.crashes())

    def to_json(self) -> dict[str, JsonValue]:
        """The `triage --json` document: `{"crashes": [...], "groups": [...]}`."""
        crashes = self.crashes()
        return {
            "crashes": [crash.to_json() for crash in crashes],
            "groups": [group.to_json() for group in group_crashes(crashes)],
        }
