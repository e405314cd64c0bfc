"""The one root error type of the engine, with a family per package.

Only these escape the core: a bad dump or a bad symbol file becomes an
`InspectorError` carrying where the damage is (offset, line), never a bare
`struct.error`, `IndexError` or `UnicodeDecodeError`.
"""

from __future__ import annotations


class InspectorError(Exception):
    """Root of every error the engine raises on purpose.

    `code` is a stable short name for logs, tests and the JSON report; the
    message is for people.
    """

    code = "InspectorError"

    def __init__(self, message: str, *, offset: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset

    def __str__(self) -> str:
        if self.offset is None:
            return self.message
        return f"{self.message} (at offset {self.offset:#x})"


class MinidumpError(InspectorError):
    """The dump (or a part of it) cannot be read."""

    code = "MinidumpError"


class SymbolError(InspectorError):
    """A symbol file, its index or its cache cannot be used."""

    code = "SymbolError"


class UnwindError(InspectorError):
    """The stackwalker was asked for something it cannot do."""

    code = "UnwindError"


class Cancelled(InspectorError):
    """Long work stopped because its cancel token was set."""

    code = "Cancelled"

    def __init__(self, message: str = "cancelled") -> None:
        super().__init__(message)
