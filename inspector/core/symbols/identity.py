"""Which symbol file, or which object file, belongs to a module: the one identity rule.

A module in a dump names itself by a debug file and debug id (from its CodeView record:
the PDB's GUID and age, or the ELF build id) and by a code file and code id (the PE's
TimeDateStamp and SizeOfImage, or the ELF build id). A candidate — a `.sym` file's
MODULE and `INFO CODE_ID` lines, a PE or ELF file's headers, a PDB's GUID and age — names
itself the same way (`ObjectIdentity`). `match` decides:

* a module with a debug id matches a candidate with the same debug id (and, when both
  name one, the same debug file leaf): `MatchedBy.DEBUG_ID`;
* a module without one (no CodeView record, as in every module of a dump written by
  wine's dbghelp, or an all-zero id) matches a candidate with the same code id *and*
  the same code file leaf, both compared without regard to case: `MatchedBy.CODE_ID`.
  A code id alone is not enough (a PE's is only a timestamp and a size, and wine builds
  all its DLLs with one timestamp), nor is a name alone;
* anything else does not match.

The same rule serves objects: a PE file found for a module is its own if
`match(module, pe_identity(...))` holds (by the PE's CodeView record when the module
has a debug id, else by TimeDateStamp + SizeOfImage and name), and a PDB belongs to
that PE if `match(pe, pdb)` holds (by the PE's CodeView GUID and age).
"""

from __future__ import annotations

from inspector.core.enums import Enum
from inspector.core.record import Record

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    from inspector.core.module_identity import ModuleIdentity


class MatchedBy(Enum):
    """How a module's symbols were matched to it (the value is also the JSON's spelling)."""

    DEBUG_ID = "debug id"
    CODE_ID = "code id"

    @property
    def json(self) -> str:
        return self.value.replace(" ", "_")


class ObjectIdentity(Record):
    """What a symbol or object file says it is ('' for what it does not say). A `ModuleIdentity`."""

    debug_file: str = ""
    debug_id: str = ""
    code_file: str = ""
    code_id: str = ""


class SymbolMatch(Record):
    """How a module's symbol file was matched, and what that file says it is."""

    by: MatchedBy
    file: ObjectIdentity


def leaf(path: str) -> str:
    """The last component of a POSIX or Windows path."""
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def has_debug_id(identity: ModuleIdentity) -> bool:
    """A debug id whose GUID (or build id) part is not all zeros."""
    guid = identity.debug_id[:32]
    return bool(guid) and guid.strip("0") != ""


def pe_code_id(time_date_stamp: int, size_of_image: int) -> str:
    """A PE's code id: TimeDateStamp as 8 hex digits, then SizeOfImage in hex (upper-case)."""
    return f"{time_date_stamp:08X}{size_of_image:X}"


def sym_identity(
    debug_id: str, debug_file: str, code_id: str | None, code_file: str | None
) -> ObjectIdentity:
    """A `.sym` file's identity from its MODULE line and `INFO CODE_ID <id> [<file>]` line.

    Without a code file on the INFO line the debug file stands for it unless it is a PDB
    (ELF and Mach-O `.sym` files name the object itself).
    """
    if not code_file and not debug_file.lower().endswith(".pdb"):
        code_file = debug_file
    return ObjectIdentity(debug_file, debug_id, code_file or "", code_id or "")


def match(module: ModuleIdentity, candidate: ModuleIdentity) -> MatchedBy | None:
    """How `candidate` is `module`'s (see the module docstring), or None when it is not."""
    if has_debug_id(module):
        if candidate.debug_id.upper() != module.debug_id.upper():
            return None
        wanted, named = leaf(module.debug_file or module.code_file), leaf(candidate.debug_file)
        if wanted and named and wanted.lower() != named.lower():
            return None
        return MatchedBy.DEBUG_ID
    if not module.code_id or not module.code_file or not candidate.code_file:
        return None
    if candidate.code_id.upper() != module.code_id.upper():
        return None
    if leaf(candidate.code_file).lower() != leaf(module.code_file).lower():
        return None
    return MatchedBy.CODE_ID
