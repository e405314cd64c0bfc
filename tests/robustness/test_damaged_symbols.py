"""Every damaged `.sym` file of the generator: only our errors, in time, damage counted, nothing lost.

Each variant (`damage.symbol_variants`: garbage, truncation, a malformed record of every type,
addresses and sizes past 64 bits, multi-megabyte lines, hostile CFI and STACK WIN programs)
replaces one file of its seed's symbol store (copied), and then:

* the file opens (or is refused with a `SymbolError`), every block parses (`check_all`) and
  lookups answer, all within the time limit, with the damage counted in its report;
* every FUNC whose block the damage did not touch still resolves to its name;
* the seed dump processed with the damaged store still shows everything the dump holds (the
  symbols cannot take modules, threads or first frames away), and a damaged file that was
  loaded is named in the problems.
"""

from __future__ import annotations

import shutil
import traceback
from pathlib import Path

import pytest

from inspector.core.errors import InspectorError
from inspector.core.symbols import IndexCache, SymbolFile
from tests.robustness.conftest import Outcomes, collected_symbol_variants
from tests.robustness.damage import SymVariant
from tests.robustness.harness import IN_PROCESS_SECONDS, run_library, time_limit

VARIANTS = collected_symbol_variants()


def _store_with(variant: SymVariant, root: Path) -> tuple[Path, ...]:
    """Copies of the seed's symbol paths, the target file replaced by the damaged bytes."""
    paths = []
    for i, original in enumerate(variant.seed.symbol_paths):
        copy = root / f"store{i}"
        if (original / variant.target).is_file():
            shutil.copytree(original, copy)
            (copy / variant.target).write_bytes(variant.data)
            paths.append(copy)
        else:
            paths.append(original)  # untouched: used in place
    return tuple(paths)


@pytest.mark.parametrize("variant", VARIANTS, ids=[v.name for v in VARIANTS])
def test_damaged_symbol_file(variant: SymVariant, tmp_path: Path, outcomes: Outcomes) -> None:
    paths = _store_with(variant, tmp_path)
    damaged = next(p / variant.target for p in paths if (p / variant.target).is_file())
    try:
        with time_limit(IN_PROCESS_SECONDS), SymbolFile.open(damaged, cache=IndexCache(None)) as sym:
            at_load = sym.damage
            for address, name in variant.intact_functions:
                function = sym.find_function(address)
                assert function is not None and function.name == name, f"FUNC {address:#x} {name} lost"
                sym.symbolize(address)
                sym.find_cfi(address)
                sym.find_stack_win(address)
            report = sym.check_all()
    except InspectorError:
        at_load = report = None
    except AssertionError:
        raise
    except Exception:
        pytest.fail(f"not an InspectorError:\n{traceback.format_exc()}")
    if variant.detectable:
        noticed = report is None or report.damaged or report.missing_final_newline or bool(report.repairs)
        assert noticed, "damage not counted (neither a damaged line nor a repair)"

    original = outcomes.original(variant.seed)
    dump_path = tmp_path / "seed.dmp"
    dump_path.write_bytes(variant.seed.data)
    outcome = run_library(dump_path, paths, None)
    assert outcome.foreign is None, outcome.foreign
    assert outcome.seconds < IN_PROCESS_SECONDS
    assert not outcome.refused
    assert outcome.modules == original.modules and outcome.os_cpu == original.os_cpu
    assert outcome.crash == original.crash
    assert list(outcome.threads) == list(original.threads)
    for thread_id, frames in original.threads.items():
        assert outcome.threads[thread_id][0][:2] == frames[0][:2]
    loaded = any(str(damaged) in message for message in outcome.problems)
    if at_load is not None and (at_load.damaged or at_load.missing_final_newline):
        module = variant.target.parts[0]
        used = any(
            f[2] is not None and module.startswith(f[2]) for fs in outcome.threads.values() for f in fs
        )
        assert loaded or not used, "a damaged symbol file in use is not among the problems"
