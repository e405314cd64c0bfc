"""A module as the symbol code sees it (`inspector.core.module_identity.ModuleIdentity`), for tests."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Module:
    code_file: str = ""
    code_id: str = ""
    debug_file: str = ""
    debug_id: str = ""
