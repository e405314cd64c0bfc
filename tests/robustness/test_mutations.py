"""Hypothesis mutations of our own dumps beyond the generator's fixed set.

Each example picks a seed, a place that matters (the header, the directory, a stream, a list
entry or a blob a stream points to, found from the seed's layout), and overwrites, inserts
huge values into, or cuts the file there. The same properties as for the generator's
variants hold: only `InspectorError`s, within the time limit, and whatever the damage left
intact (`damage.survivors`) is in the output.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.robustness.conftest import Outcomes, collected_seeds
from tests.robustness.damage import INF, Damage, DumpSeed, DumpVariant, Span, survivors
from tests.robustness.harness import IN_PROCESS_SECONDS, assert_nothing_lost, run_library

SEEDS = collected_seeds()


def _places(seed: DumpSeed) -> list[Span]:
    layout = seed.layout
    places = [Span(0, 32), layout.directory]
    for stream in layout.streams.values():
        places.append(stream.body)
        places.extend(stream.entries)
        places.extend(span for _, span in stream.blobs)
    return [p for p in places if p and p.end <= len(seed.data)]


@st.composite
def mutated(draw: st.DrawFn) -> DumpVariant:
    seed = draw(st.sampled_from(SEEDS))
    data = bytearray(seed.data)
    damage: list[Damage] = []
    places = _places(seed)
    for _ in range(draw(st.integers(1, 4))):
        place = draw(st.sampled_from(places))
        at = draw(st.integers(place.start, place.end - 1))
        kind = draw(st.sampled_from(["bytes", "huge", "zero"]))
        if kind == "bytes":
            patch = draw(st.binary(min_size=1, max_size=8))
        elif kind == "huge":
            patch = draw(st.sampled_from([b"\xff\xff\xff\xff", b"\xff\xff\xff\x7f", b"\x00\x00\x00\x80"]))
        else:
            patch = bytes(draw(st.integers(1, 16)))
        patch = patch[: len(data) - at]
        data[at : at + len(patch)] = patch
        damage.append(Damage(at, at + len(patch)))
    if draw(st.booleans()):
        cut = draw(st.integers(0, len(data)))
        del data[cut:]
        damage.append(Damage(cut, INF))
    name = f"{seed.name}/mutation/" + ",".join(f"{d.start:#x}" for d in damage)
    return DumpVariant(name, "mutation", seed, bytes(data), damage=tuple(damage), detectable=False)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(variant=mutated())
def test_mutated_seeds_keep_every_property(variant: DumpVariant, outcomes: Outcomes, tmp_path: Path) -> None:
    assert variant.seed is not None
    path = tmp_path / "mutated.dmp"
    path.write_bytes(variant.data)
    outcome = run_library(path, variant.seed.symbol_paths, outcomes.cache)
    assert outcome.foreign is None, outcome.foreign
    assert outcome.seconds < IN_PROCESS_SECONDS
    if not outcome.refused:
        assert outcome.json_problems == outcome.problems
    assert_nothing_lost(outcome, outcomes.original(variant.seed), survivors(variant))
