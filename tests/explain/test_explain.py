"""The explanation in the core: one tree per frame, with the caller registers that hold at each decision.

The register state of a decision is what the walk had decided *then*: a STACK CFI rule not
evaluated yet leaves its register pending (never shown with the callee's value), and every
known register says where its value came from.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.core.explain import (
    NodeKind,
    RegisterSource,
    RegisterState,
    RegisterStatus,
    TraceNode,
    build_frame_trace,
    decisions_of,
    register_provenance,
)
from inspector.core.process import ProcessOptions, ProcessState, process
from inspector.core.report.trace_text import tree_lines
from inspector.core.types import Cpu, Os
from inspector.core.unwind import StackFrame
from inspector.resources import sample_dump, sample_symbols
from tests.synth.section import Label, Section
from tests.unwind.harness import UnwindCase

CRASHING = 2  # the sample's crashing thread


@pytest.fixture(scope="module")
def sample() -> ProcessState:
    return process(sample_dump(), ProcessOptions(symbol_paths=(sample_symbols(),), use_symbols_cache=False))


def _decision_before(tree: TraceNode, node: TraceNode) -> TraceNode:
    decisions = [n for n in tree.walk() if n.step]
    return decisions[decisions.index(node) - 1]


def _state(node: TraceNode) -> RegisterState:
    assert node.registers is not None
    return node.registers


def test_a_rule_not_yet_evaluated_is_pending_then_known_from_its_rule(sample: ProcessState) -> None:
    frames = sample.threads[CRASHING].frames
    tree = build_frame_trace(frames, 1, context_source="exception record")
    rbx_rule = next(n for n in tree.walk() if n.kind is NodeKind.RULE and n.text.startswith("$rbx:"))
    before = _state(_decision_before(tree, rbx_rule))
    after = _state(rbx_rule)
    # before its rule rbx is pending: no value, although the callee's rbx (0) is forwarded
    assert before.status("rbx") is RegisterStatus.PENDING and before.value("rbx") is None
    assert frames[0].context.get("rbx") == 0
    after_rbx = after.known["rbx"]
    assert after.status("rbx") is RegisterStatus.KNOWN
    assert (after_rbx.value, after_rbx.source) == (0x555555558148, RegisterSource.CFI)
    assert after_rbx.how == "CFI $rbx: .cfa -40 + ^"
    # r14 has no rule: forwarded with the callee's value from the start; rax is never known
    assert before.known["r14"].source is RegisterSource.FORWARDED
    assert before.value("r14") == frames[0].context.get("r14")
    assert before.status("rax") is after.status("rax") is RegisterStatus.UNKNOWN


def test_each_rule_step_decides_its_register_in_evaluation_order(sample: ProcessState) -> None:
    frames = sample.threads[CRASHING].frames
    tree = build_frame_trace(frames, 1)
    rows = next(n for n in tree.walk() if n.kind is NodeKind.ROWS)
    rules = [n for n in tree.walk() if n.kind is NodeKind.RULE]
    assert [r.text.split(":")[0] for r in rules] == [".cfa", ".ra", "$r13", "$r12", "$rbp", "$rbx"]
    assert _state(rows).pending == {"rsp", "rip", "r13", "r12", "rbp", "rbx"}
    pending = [set(_state(r).pending) for r in rules]
    assert pending == [
        {"rip", "r13", "r12", "rbp", "rbx"},
        {"r13", "r12", "rbp", "rbx"},
        {"r12", "rbp", "rbx"},
        {"rbp", "rbx"},
        {"rbx"},
        set(),
    ]
    # after the last rule the state is the caller frame's registers, value for value
    assert dict(_state(rules[-1]).values()) == dict(frames[1].context.valid_registers())
    assert list(_state(rules[1]).known)[-2:] == ["rsp", "rip"]  # in the order they became known


def test_provenance_is_the_final_state_of_the_tree(sample: ProcessState) -> None:
    frames = sample.threads[CRASHING].frames
    provenance = register_provenance(frames[1], frames[0])
    assert provenance["rip"] == "CFI .ra: .cfa -8 + ^ (.ra)"
    assert provenance["rsp"] == "CFI .cfa: $rsp 40 + (the CFA)"
    assert provenance["rbx"] == "CFI $rbx: .cfa -40 + ^"
    assert provenance["r14"] == "forwarded from the callee (callee-saved, no rule)"
    assert set(provenance) == {name for name, _ in frames[1].context.valid_registers()}
    context = register_provenance(frames[0], None, context_source="exception record")
    assert set(context.values()) == {"context (exception record)"}


def test_the_text_and_the_decisions_are_the_same_tree(sample: ProcessState) -> None:
    frames = sample.threads[CRASHING].frames
    trees = [
        build_frame_trace(frames, i, termination=sample.threads[CRASHING].termination if i == 3 else None)
        for i in range(len(frames))
    ]
    decisions = decisions_of(trees)
    text = "\n".join(line for tree in trees for line in tree_lines(tree))
    for decision in decisions:
        node = trees[decision.frame].at(decision.path)
        assert node is not None and node.step
        if node.kind not in (NodeKind.FRAME, NodeKind.RESULT):  # the frame's own line stands for these
            assert f"{node.text} - {node.result}" in text
    stopped = [d for d in decisions if d.label.startswith("Walk ended: the bottom of the stack — ")]
    assert [d.frame for d in stopped] == [len(frames) - 1]


def _frames_of(case: UnwindCase, stack: Section, **registers: int) -> tuple[StackFrame, ...]:
    return case.walk(stack, **registers).frames


def test_frame_pointer_registers_come_from_the_words_of_the_frame_record(tmp_path: Path) -> None:
    module1, module2, start = 0x7400C0000000, 0x7500B0000000, 0x8000000080000000
    return_address = module2 + 0x110
    frame0_rbp, frame1_rbp = Label(), Label()
    stack = Section(start=start).append_repeated(0, 16)
    stack.mark(frame0_rbp).d64(frame1_rbp).d64(return_address)
    stack.append_repeated(0, 32).mark(frame1_rbp).d64(0)
    case = (
        UnwindCase(tmp_path, Cpu.AMD64, Os.LINUX)
        .add_module(module1, 0x10000, "m1")
        .add_module(module2, 0x10000, "m2")
    )
    frames = _frames_of(case, stack, rip=module1 + 0x200, rbp=frame0_rbp.value, rsp=start)
    tree = build_frame_trace(frames, 1)
    probe = next(n for n in tree.walk() if n.kind is NodeKind.PROBE)
    state = _state(probe)
    assert state.known["rip"].how == f"frame pointer: return address at [{frame0_rbp.value + 8:#x}]"
    assert state.known["rbp"].how == f"frame pointer: caller rbp at [{frame0_rbp.value:#x}]"
    assert state.known["rsp"].how == "frame pointer: above the frame record at rbp"
    assert {k.source for k in state.known.values()} == {RegisterSource.FRAME_POINTER}
    assert register_provenance(frames[1], frames[0]) == {name: k.how for name, k in state.known.items()}


def test_a_dropped_rule_leaves_its_forwarded_register_unknown(tmp_path: Path) -> None:
    module, start = 0x7400C0000000, 0x8000000080000000
    symbols = (
        "FUNC 100 100 0 f\n"
        "STACK CFI INIT 100 100 .cfa: $rsp 8 + .ra: .cfa 8 - ^ $rbx: .cfa 4096 + ^\n"  # reads off the stack
    )
    stack = Section(start=start).d64(module + 0x180).append_repeated(0, 8)
    case = UnwindCase(tmp_path, Cpu.AMD64, Os.LINUX).add_module(module, 0x10000, "m", symbols)
    frames = _frames_of(case, stack, rip=module + 0x110, rsp=start, rbx=0x1234)
    tree = build_frame_trace(frames, 1)
    rbx_rule = next(n for n in tree.walk() if n.kind is NodeKind.RULE and n.text.startswith("$rbx:"))
    assert _state(_decision_before(tree, rbx_rule)).status("rbx") is RegisterStatus.PENDING
    assert _state(rbx_rule).status("rbx") is RegisterStatus.UNKNOWN
    assert not frames[1].context.is_valid("rbx")
