"""The crash analysis in the reports: rust-minidump 0.25's `crash_info` JSON fields and human lines.

JSON (`ProcessState::to_json`): `adjusted_address` `{kind, offset|address}`; `instruction`;
`memory_accesses` `[{address, size, access_type?, is_likely_guard_page?}]` (`access_type`
left out when the direction is not derived, `is_likely_guard_page` only when true);
`instruction_pointer_update` `{address}` or null (also when the instruction does not move
it); `possible_bit_flips` null when empty; `crash_inconsistencies` the snake-case names.
Our addition: `inspector_code_source` (where the instruction's bytes came from, or why there
were none).

Human (`ProcessState::print`): after `Crash address:` (with ` **` and the adjusted address
when there is one), `Crashing instruction:`, the accesses, the instruction-pointer update,
the bit flips (by confidence, then address) and the inconsistencies.
"""

from __future__ import annotations

from inspector.core.analysis.bitflip import sorted_for_report
from inspector.core.analysis.model import (
    NO_UPDATE,
    AccessType,
    AdjustedKind,
    CodeOrigin,
    CrashAnalysis,
    MemoryAccess,
)

JsonValue = None | bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"]

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:  # the alias is for type checkers (annotations are not evaluated)
    from collections.abc import Callable

    Hex = Callable[[int], str]


def shown_analysis(analysis: CrashAnalysis | None, *, all_cpus: bool) -> CrashAnalysis | None:
    """The analysis a report shows: rust-minidump's, or with `all_cpus` ours for x86 / ARM / ARM64 too."""
    if analysis is None:
        return None
    if all_cpus and analysis.beyond_reference is not None:
        return analysis.beyond_reference
    return analysis


def crash_info_fields(analysis: CrashAnalysis | None, crashed: bool, hexa: Hex) -> dict[str, JsonValue]:
    """The analysis keys of `crash_info` (all null without an exception). The objects in them have
    their keys in sorted order, as the JSON report writes them (`json_report.json_document`)."""
    if analysis is None:
        return {
            "adjusted_address": None,
            "instruction": None,
            "memory_accesses": None,
            "instruction_pointer_update": None,
            "possible_bit_flips": None,
            "crash_inconsistencies": [] if crashed else None,
            "inspector_code_source": None,
        }
    adjusted = analysis.adjusted_address
    ins = analysis.instruction
    update = None if ins is None else ins.instruction_pointer_update
    return {
        "adjusted_address": None
        if adjusted is None
        else (
            {"kind": adjusted.kind.value, "offset": hexa(adjusted.value)}
            if adjusted.kind is AdjustedKind.NULL_POINTER
            else {"address": hexa(adjusted.value), "kind": adjusted.kind.value}
        ),
        "instruction": None if ins is None else ins.instruction.text,
        "memory_accesses": None
        if ins is None or ins.memory_accesses is None
        else [_access(a, hexa) for a in ins.memory_accesses],
        "instruction_pointer_update": _update(update, hexa) if isinstance(update, MemoryAccess) else None,
        "possible_bit_flips": [
            {
                "address": hexa(flip.address),
                "confidence": flip.confidence,
                "details": {
                    "is_null": flip.details.is_null,
                    "nearby_registers": flip.details.nearby_registers,
                    "poison_registers": flip.details.poison_registers,
                    "was_low": flip.details.was_low,
                    "was_non_canonical": flip.details.was_non_canonical,
                },
                "source_register": flip.source_register,
            }
            for flip in analysis.possible_bit_flips
        ]
        or None,
        "crash_inconsistencies": [i.value for i in analysis.inconsistencies],
        "inspector_code_source": _code_source(analysis, hexa),
    }


def _access(access: MemoryAccess, hexa: Hex) -> dict[str, JsonValue]:
    out: dict[str, JsonValue] = {}
    if access.access_type is not AccessType.UNDERIVABLE:
        out["access_type"] = access.access_type.value
    out["address"] = hexa(access.address)
    if access.is_likely_guard_page:
        out["is_likely_guard_page"] = True
    out["size"] = access.size
    return out


def _update(update: MemoryAccess, hexa: Hex) -> dict[str, JsonValue]:
    out: dict[str, JsonValue] = {"address": hexa(update.address)}
    if update.is_likely_guard_page:
        out["is_likely_guard_page"] = True
    return out


def _code_source(analysis: CrashAnalysis, hexa: Hex) -> dict[str, JsonValue] | None:
    source = analysis.code_source
    if source is None:
        return None
    return {
        "address": hexa(source.address),
        "from": None if source.origin is CodeOrigin.NONE else source.origin.value,
        "module": source.module,
        "note": source.note,
        "path": source.path,
        "size": source.size,
    }


def human_lines(analysis: CrashAnalysis | None, address_text: str, hexa: Hex) -> list[str]:
    """The `Crash address:` line and the analysis lines that follow it in the human report."""
    if analysis is None or analysis.adjusted_address is None:
        out = [f"Crash address: {address_text}"]
    else:
        adjusted = analysis.adjusted_address
        label = "Non-canonical address" if adjusted.kind is AdjustedKind.NON_CANONICAL else "Null pointer"
        what = "detected" if adjusted.kind is AdjustedKind.NON_CANONICAL else "detected with offset"
        out = [f"Crash address: {address_text} **", f"    ** {label} {what}: {hexa(adjusted.value)}"]
    if analysis is None:
        return out
    ins = analysis.instruction
    if ins is not None:
        out.append(f"Crashing instruction: `{ins.instruction.text}`")
        if ins.memory_accesses is not None:
            if ins.memory_accesses:
                out.append("Memory accessed by instruction:")
                for i, access in enumerate(ins.memory_accesses):
                    out.append(f"  {i}. Address: {hexa(access.address)}")
                    out.append(f"     Size: {'Unknown' if access.size is None else access.size}")
                    if access.is_likely_guard_page:
                        out.append("     This address falls in a likely guard page.")
                    if access.access_type is not AccessType.UNDERIVABLE:
                        out.append(f"     Access type: {access.access_type.label}")
            else:
                out.append("No memory accessed by instruction")
        update = ins.instruction_pointer_update
        if update is NO_UPDATE:
            out.append("No instruction pointer update by instruction")
        elif isinstance(update, MemoryAccess):
            out.append("Instruction pointer update done by instruction:")
            out.append(f"  Address: {hexa(update.address)}")
            if update.is_likely_guard_page:
                out.append("     This address falls in a likely guard page.")
    if analysis.possible_bit_flips:
        out.append("Crashing address may be the result of a flipped bit:")
        for i, flip in enumerate(sorted_for_report(analysis.possible_bit_flips)):
            register = "" if flip.source_register is None else f"{flip.source_register}="
            out.append(f"  {i}. Valid address: {register}{hexa(flip.address)} ({flip.confidence:.3f})")
    if analysis.inconsistencies:
        out.append("Crash is inconsistent:")
        out.extend(f"  {i.sentence}" for i in analysis.inconsistencies)
    return out


_ACCESS_WORDS = {
    AccessType.READ: ("read", "from"),
    AccessType.WRITE: ("write", "to"),
    AccessType.READ_WRITE: ("read-write", "at"),
    AccessType.UNDERIVABLE: ("access", "at"),
}


def _crashing_access(analysis: CrashAnalysis, crash_address: int | None) -> MemoryAccess | None:
    """The access the crash is about: the one at the adjusted or crash address, else the first."""
    ins = analysis.instruction
    if ins is None or not ins.memory_accesses:
        return None
    accesses = ins.memory_accesses
    adjusted = analysis.adjusted_address
    wanted = [a for a in (None if adjusted is None else adjusted.value, crash_address) if a is not None]
    for address in wanted:
        for access in accesses:
            if access.address == address:
                return access
    if adjusted is not None and adjusted.kind is AdjustedKind.NULL_POINTER:
        return next((a for a in accesses if a.is_likely_null_pointer), accesses[0])
    return accesses[0]


def analysis_sentence(
    analysis: CrashAnalysis | None, hexa: Hex, *, crash_address: int | None = None
) -> str | None:
    """The analysis in one plain sentence for people (the window's summary), None without one.

    `write of 8 bytes to 0x0 — null pointer + 0x0`, `read of 8 bytes from 0x8000000000000000 —
    non-canonical address`, `` `idiv ecx` accesses no memory ``, then `possible bit flip:
    0x400000, confidence 0.25` for the likeliest flip and `inconsistent: …` when the exception
    and the instruction disagree.
    """
    if analysis is None:
        return None
    parts: list[str] = []
    ins = analysis.instruction
    adjusted = analysis.adjusted_address
    access = _crashing_access(analysis, crash_address)
    if access is not None:
        verb, preposition = _ACCESS_WORDS[access.access_type]
        size = "unknown size" if access.size is None else f"{access.size} byte{'s' * (access.size != 1)}"
        text = f"{verb} of {size} {preposition} {hexa(access.address)}"
        if adjusted is not None and adjusted.kind is AdjustedKind.NULL_POINTER:
            text += f" — null pointer + {hexa(adjusted.value)}"
        elif adjusted is not None:
            text += f" — non-canonical address {hexa(adjusted.value)}"
        if access.is_likely_guard_page:
            text += " — in a likely guard page"
        parts.append(text)
    elif ins is not None and ins.memory_accesses is None:
        parts.append(
            f"`{ins.instruction.text}`: its memory accesses are unknown (a register it uses is not known)"
        )
    elif ins is not None:
        parts.append(f"`{ins.instruction.text}` accesses no memory")
    elif analysis.code_source is not None and analysis.code_source.origin is CodeOrigin.NONE:
        # what was tried is in the report's code source and the Disassembly pane: too long here
        parts.append("crashing instruction not available (no code bytes in the dump or a module file found)")
    if analysis.possible_bit_flips:
        flip = sorted_for_report(analysis.possible_bit_flips)[0]
        register = "" if flip.source_register is None else f"{flip.source_register}="
        parts.append(f"possible bit flip: {register}{hexa(flip.address)}, confidence {flip.confidence:.3g}")
    if analysis.inconsistencies:
        first = analysis.inconsistencies[0].sentence
        parts.append(f"inconsistent: {first[0].lower()}{first[1:]}")
    return "; ".join(parts) or None
