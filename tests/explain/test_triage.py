"""Triage marks read from real walks: report numbering, guesses, own code, recursion, normal ends,
stack overflow; and the shortened forms of long C++ names."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.core.explain.triage import (
    first_own_frame,
    is_guess,
    is_system_module,
    normal_end,
    overflow_reason,
    recursion_runs,
    report_number,
    report_numbers,
)
from inspector.core.process import ProcessOptions, ProcessState, process
from inspector.core.record import replace
from inspector.core.report.human import render_human
from inspector.core.report.short_names import collapse_templates, shortened_forms
from inspector.core.unwind import StackFrame
from inspector.resources import sample_dump, sample_symbols

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "crashes"


def walk(name: str) -> ProcessState:
    paths = (str(FIXTURES / name / "symbols"), str(FIXTURES / "system-symbols"))
    return process(
        str(FIXTURES / name / f"{name}.dmp"), ProcessOptions(symbol_paths=paths, use_symbols_cache=False)
    )


@pytest.fixture(scope="module")
def templates() -> ProcessState:
    return walk("cxx_templates")


def test_report_numbers_are_the_human_reports(templates: ProcessState) -> None:
    frames = templates.threads[0].frames
    report = render_human(templates, brief=True)
    numbers = report_numbers(frames)
    assert numbers[:3] == [9, 11, 12]  # nine inline frames (#0-#8) before frame 0, one before frame 1
    for index in (0, 1, 100, len(frames) - 1):
        frame = frames[index]
        assert f"\n{numbers[index]:2}  {frame.module.filename if frame.module else ''}" in report
        assert report_number(frames, index) == numbers[index]
    assert report_number(frames, 0, 1) == 0 and report_number(frames, 0, 9) == 8


def test_a_recursion_is_one_run_and_the_walk_ends_normally(templates: ProcessState) -> None:
    stack = templates.threads[0]
    runs = recursion_runs(stack.frames)
    assert [(r.first, r.count) for r in runs] == [
        (2, 300)
    ]  # frame 1 calls the leaf: other address, same function
    assert "accumulate" in (stack.frames[2].function_name or "")
    assert normal_end(stack.frames, stack.termination)  # `_start`
    assert overflow_reason(stack.frames, stack.termination) is None  # 307 frames: deep, not an overflow
    assert first_own_frame(stack.frames) == 0


def test_guesses_and_system_libraries() -> None:
    state = walk("cxx_terminate")
    frames = state.threads[0].frames
    names = [f.function_name for f in frames]
    functions = {
        entry.module.code_file: entry.symbols.functions for entry in state.modules if entry.symbols.loaded
    }
    assert functions["libstdc++.so.6"] == 0 and functions["libgcc_s.so.1"] == 0  # PUBLIC names only
    assert functions[frames[-1].module.code_file] > 0  # our binary has FUNCs

    def has_functions(frame: StackFrame) -> bool:
        return frame.module is None or functions.get(frame.module.code_file) != 0

    guess = names.index("__cxa_throw_bad_array_new_length")
    # a PUBLIC symbol 0x552 bytes below, in a library whose symbols name no function: a guess
    assert frames[guess].function_offset == 0x552 and is_guess(frames[guess], has_functions(frames[guess]))
    # a few bytes past a PUBLIC name of such a library: the name is most likely right
    near = replace(frames[guess], instruction=frames[guess].instruction - 0x552 + 0x304)
    assert not is_guess(near, module_has_functions=False)
    # the same name in a module with FUNCs would be near enough to be the function itself
    assert not is_guess(frames[guess], module_has_functions=True)
    # far from the PUBLIC below: a guess wherever it is
    far = names.index("_Unwind_GetTextRelBase")
    assert frames[far].function_offset == 0x1ED3 and is_guess(frames[far], module_has_functions=True)
    # `_start` is PUBLIC only, a few bytes in, in our binary that has FUNCs: the symbol itself
    assert frames[-1].function_name == "_start" and frames[-1].symbol.from_public
    assert not is_guess(frames[-1], has_functions(frames[-1]))
    # FUNC names are never guesses
    assert not any(is_guess(f, has_functions(f)) for f in frames if f.symbol and not f.symbol.from_public)
    own = first_own_frame(frames)
    assert (
        own is not None
        and frames[own].module is not None
        and frames[own].module.filename == "settings_loader"
    )
    assert all(
        frames[i].module is not None and is_system_module(frames[i].module.code_file) for i in range(own)
    )
    assert is_system_module("C:\\Windows\\System32\\ntdll.dll") and is_system_module("/usr/lib/libfoo.so")
    assert not is_system_module("/home/me/build/app") and not is_system_module(
        "C:\\Program Files\\App\\app.exe"
    )


def test_the_sample_ends_at_clone3_normally() -> None:
    state = process(
        str(sample_dump()), ProcessOptions(symbol_paths=(str(sample_symbols()),), use_symbols_cache=False)
    )
    stack = state.threads[2]
    assert stack.frames[-1].function_name == "__clone3"
    assert normal_end(stack.frames, stack.termination)


def test_long_cxx_names_shorten_by_structure() -> None:
    name = (
        "std::_Function_handler<void (engine::Entity&), engine::World<engine::PhysicsSystem, "
        "engine::RenderSystem>::run()::{lambda(engine::Entity&)#1}>::_M_invoke("
        "std::_Any_data const&, engine::Entity&)"
    )
    assert shortened_forms(name) == [
        name,
        "std::_Function_handler<…>::_M_invoke(std::_Any_data const&, engine::Entity&)",
        "std::_Function_handler<…>::_M_invoke(…)",
        "_Function_handler<…>::_M_invoke(…)",
    ]
    lambda_ = (
        "engine::World<engine::PhysicsSystem>::run()::{lambda(engine::Entity&)#1}"
        "::operator()(engine::Entity&) const"
    )
    assert shortened_forms(lambda_)[2] == "engine::World<…>::run()::{lambda#1}"
    # operators and empty lists are names, not lists to collapse
    assert (
        collapse_templates("operator<<(std::ostream&, A<int> const&)")
        == "operator<<(std::ostream&, A<…> const&)"
    )
    assert shortened_forms("f()") == ["f()"] and shortened_forms("main") == ["main"]
    assert collapse_templates("(anonymous namespace)::g<int>(int)") == "(anonymous namespace)::g<…>(int)"


def test_a_very_deep_crash_is_called_a_stack_overflow(templates: ProcessState) -> None:
    stack = templates.threads[0]
    # 1,268 frames: the recursion made 1,261 calls deep (1,200 copies + the 61 of the last 66 frames)
    deep = [*stack.frames[:2], *[stack.frames[2]] * 1200, *stack.frames[-66:]]
    reason = overflow_reason(deep, stack.termination)
    assert reason is not None and reason.startswith(
        "1,268 frames deep, 1,261 of them recursive calls of engine::"
    )
    assert overflow_reason(stack.frames, stack.termination, "EXCEPTION_STACK_OVERFLOW") == (
        "the exception is EXCEPTION_STACK_OVERFLOW"
    )
    # deep without a recursion is not evidence enough
    varied = [*stack.frames[:2], *stack.frames[-4:]] * 200  # 1,200 frames, no two equal in a row
    assert not recursion_runs(varied) and overflow_reason(varied, stack.termination) is None


def test_a_crash_just_below_the_stack_pointer_is_a_stack_overflow() -> None:
    state = walk("analysis_stack_push")  # `push rbp` below a thread's 64 KiB stack, 37 frames deep
    assert state.crash is not None
    crashing = state.crashing_thread
    assert crashing is not None
    reason = overflow_reason(crashing.frames, crashing.termination, state.crash.reason, state.crash.address)
    assert reason == (
        "the crash address is 8 bytes below the stack pointer: the thread ran out of stack 37 frames deep"
    )
    # a null pointer is nowhere near the stack
    null = walk("analysis_null_write")
    assert null.crash is not None and null.crashing_thread is not None
    stack = null.crashing_thread
    assert overflow_reason(stack.frames, stack.termination, null.crash.reason, null.crash.address) is None
