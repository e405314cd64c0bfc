"""Mozilla's side-channel JSON (`minidump-stackwalk --evil-json`): certificate subjects and microcode.

rust-minidump 0.25 (`minidump-processor/src/evil.rs`) reads two keys of a JSON object
and ignores the rest:

* `ModuleSignatureInfo`: `{certificate subject: [module file name, …]}`, given either as
  an object or as a string that holds one. Each module gets its subject; the JSON
  report then has `cert_subject` on modules and unloaded modules and
  `modules_contains_cert_info: true`, and the human report appends ` (subject)` to the
  module lines.
* `CPUMicrocodeVersion`: a `0x…` hex string, used for `system_info.cpu_microcode_version`
  only when the dump's /proc/cpuinfo copy names none.

A file that cannot be read or is not a JSON object, or a `ModuleSignatureInfo` of the
wrong shape, is reported (rust-minidump logs an error) and the walk goes on without it.
"""

from __future__ import annotations

import json
import os
import string
from collections.abc import Mapping

from inspector.core.process import Problem, ProcessState
from inspector.core.record import Record, field, replace


class ExtraInfo(Record):
    cert_subjects: Mapping[str, str] = field(default_factory=dict)
    cpu_microcode_version: str | None = None
    problems: tuple[str, ...] = ()  # what could not be used, one sentence each


def read_extra_info(path: str | os.PathLike[str]) -> ExtraInfo:
    """What the file gives; never raises for a bad file (its problems are in `problems`)."""
    try:
        with open(path, "rb") as f:
            text = f.read()
    except OSError as exc:
        return ExtraInfo(problems=(f"could not load the extra JSON at {os.fspath(path)!r}: {exc.strerror}",))
    name = os.fspath(path)
    try:
        document = json.loads(text)
    except (ValueError, RecursionError) as exc:
        return ExtraInfo(problems=(f"could not parse the extra JSON {name!r} (not valid JSON: {exc})",))
    if not isinstance(document, dict):
        return ExtraInfo(problems=(f"could not parse the extra JSON {name!r} (not a JSON object)",))
    problems = []
    subjects: dict[str, str] = {}
    if "ModuleSignatureInfo" in document:
        by_subject = _subjects(document["ModuleSignatureInfo"])
        if by_subject is None:
            problems.append("could not parse the extra JSON's ModuleSignatureInfo (not an object of lists)")
        else:
            for subject, modules in by_subject.items():
                for module in modules:
                    subjects[module] = subject
    microcode = document.get("CPUMicrocodeVersion")
    return ExtraInfo(subjects, microcode if isinstance(microcode, str) else None, tuple(problems))


def _subjects(value: object) -> dict[str, list[str]] | None:
    """`{subject: [module, …]}` from an object or a string holding one, None for any other shape."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            return None
    if not isinstance(value, dict):
        return None
    if not all(isinstance(m, list) and all(isinstance(n, str) for n in m) for m in value.values()):
        return None
    return value


def _microcode(text: str | None) -> int | None:
    """`0x` and hex digits (a u64, as rust-minidump parses it), else None."""
    if text is None or not text.startswith("0x"):
        return None
    digits = text[2:].removeprefix("+")
    if not digits or any(c not in string.hexdigits for c in digits):
        return None
    value = int(digits, 16)
    return value if value < 1 << 64 else None


def apply_extra_info(state: ProcessState, info: ExtraInfo) -> ProcessState:
    """The state with the certificate subjects, the microcode fallback and the file's problems."""
    system = state.system
    microcode = _microcode(info.cpu_microcode_version)
    if system.cpu_microcode_version is None and microcode is not None:
        system = replace(system, cpu_microcode_version=microcode)
    problems = tuple(Problem("extra json", "ExtraJson", message) for message in info.problems)
    return replace(
        state,
        system=system,
        cert_subjects=tuple(sorted(info.cert_subjects.items())),
        problems=state.problems + problems,
    )
