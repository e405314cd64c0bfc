"""Every damaged dump of the generator, in-process: only our errors, in time, damage reported, nothing lost.

For each variant (`damage.dump_variants`: truncations, header and directory damage, huge
counts, hostile entry fields, byte flips, files that are not dumps) the library does what the
command line does (`harness.run_library`: open, dump report, process with the seed's symbols,
JSON / human / trace / machine reports) under a time limit. Then:

* only `InspectorError`s escape, and the input finishes within `IN_PROCESS_SECONDS`;
* damage the reader can see is seen: the input is refused with an error, or problems are
  recorded; every problem is in the JSON's `inspector_problems` and in the human report;
* nothing is lost: what the damaged file still holds (`damage.survivors`: system info, the
  crash, each module whose record, name and CodeView bytes are intact, each intact thread,
  its first frame, and its whole walk when everything a walk reads is intact) is in the output,
  equal to the undamaged original's.
"""

from __future__ import annotations

from collections import Counter

import pytest

from inspector.core.errors import InspectorError
from tests.robustness.conftest import Outcomes, collected_dump_variants
from tests.robustness.damage import DumpVariant, survivors
from tests.robustness.harness import IN_PROCESS_SECONDS, assert_nothing_lost

VARIANTS = collected_dump_variants()


def _first_lines(text: str) -> str:
    return "\n".join(text.strip().splitlines()[-12:])


@pytest.mark.parametrize("variant", VARIANTS, ids=[v.name for v in VARIANTS])
def test_only_our_errors_in_time_and_damage_reported(variant: DumpVariant, outcomes: Outcomes) -> None:
    outcome = outcomes.of(variant)
    assert outcome.foreign is None, f"not an InspectorError:\n{_first_lines(outcome.foreign)}"
    assert outcome.seconds < IN_PROCESS_SECONDS
    error = outcome.open_error or outcome.process_error
    if error is not None:
        assert isinstance(error, InspectorError) and str(error).strip()
        assert "\n" not in str(error)  # the command line prints it as one line
        return
    if variant.detectable:
        assert outcome.noticed, "the damage went unnoticed: no problem recorded"
    assert outcome.json_problems == outcome.problems
    for message in outcome.problems:
        assert message in outcome.human


@pytest.mark.parametrize("variant", [v for v in VARIANTS if v.seed is not None], ids=lambda v: v.name)
def test_nothing_readable_is_lost(variant: DumpVariant, outcomes: Outcomes) -> None:
    assert variant.seed is not None
    original = outcomes.original(variant.seed)
    outcome = outcomes.of(variant)
    assert_nothing_lost(outcome, original, survivors(variant))


def test_usable_output_figures(outcomes: Outcomes, capsys: pytest.CaptureFixture[str]) -> None:
    """How much of each damaged dump still gives a usable report (printed).

    The floors are generous (a third of the variants cut the file inside its header, directory
    or first streams); they fail when the engine goes back to refusing damaged dumps whole.
    """
    seeded = [v for v in VARIANTS if v.seed is not None]
    counts: Counter[str] = Counter()
    by_family: Counter[tuple[str, str]] = Counter()
    checked: Counter[str] = Counter()  # what `test_nothing_readable_is_lost` compared
    for variant in seeded:
        outcome = outcomes.of(variant)
        facts = {
            "report": not outcome.refused,
            "frames": outcome.crashing_thread_frames > 0,
            "walked": outcome.crashing_thread_frames > 1,
            "modules": bool(outcome.modules),
            "system": outcome.os_cpu is not None and outcome.os_cpu[1] != "unknown",
        }
        for key, value in facts.items():
            counts[key] += value
            by_family[(variant.family, key)] += value
        by_family[(variant.family, "all")] += 1
        expected = survivors(variant)
        checked["modules"] += len(expected.modules)
        checked["threads"] += len(expected.threads)
        checked["first frames"] += len(expected.first_frames)
        checked["whole walks"] += len(expected.walks)
    families = sorted({f for f, _ in by_family})
    lines = [
        f"[robustness] {len(seeded)} damaged dumps: {counts['report']} still give a report, "
        f"{counts['frames']} frames for the crashing thread ({counts['walked']} more than the context "
        f"frame), {counts['modules']} the module list, {counts['system']} the CPU"
    ]
    for family in families:
        n = by_family[(family, "all")]
        got = {key: by_family[(family, key)] for key in ("report", "frames", "walked", "modules")}
        lines.append(
            f"  {family:12} {n:4}: report {got['report']}, frames {got['frames']} "
            f"(walked {got['walked']}), modules {got['modules']}"
        )
    lines.append(
        "  intact and compared with the original: " + ", ".join(f"{n} {k}" for k, n in checked.items())
    )
    with capsys.disabled():
        print("\n" + "\n".join(lines))
    assert counts["report"] >= 0.85 * len(seeded)
    assert counts["modules"] >= 0.7 * len(seeded)
    assert counts["frames"] >= 0.6 * len(seeded)
