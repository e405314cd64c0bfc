"""`ModuleIdentity`: what the symbol side needs to know about a loaded module.

A module of its own because a `Protocol` needs `typing` at run time: the engine's modules name
it in annotations only (imported under `TYPE_CHECKING`), so a headless walk never imports this.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class ModuleIdentity(Protocol):
    """What the symbol side needs to know about a loaded module.

    The minidump reader's module record satisfies it; the symbol package
    depends only on this protocol, never on the minidump package.
    """

    @property
    def code_file(self) -> str:
        """Path of the loaded file as the dump recorded it (may be a Windows path)."""
        ...

    @property
    def code_id(self) -> str:
        """Code identifier as rust-minidump prints it ('' when unknown)."""
        ...

    @property
    def debug_file(self) -> str:
        """Debug file name (PDB name, or the ELF/Mach-O file name) ('' when unknown)."""
        ...

    @property
    def debug_id(self) -> str:
        """Breakpad debug identifier, upper-case hex + age ('' when unknown)."""
        ...
