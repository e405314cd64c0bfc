/*
 * dump_on_crash.c -- the unhandled-exception filter: MiniDumpWriteDump of the whole process
 * (every thread's stack and context; MiniDumpNormal), with the exception record and the
 * crashing thread's context taken from the EXCEPTION_POINTERS the filter receives.  The
 * process then ends with the exception code as its exit status.
 */
#include <windows.h>
#include <dbghelp.h>
#include <stdio.h>

#include "dump_on_crash.h"

static LONG WINAPI write_minidump(EXCEPTION_POINTERS *exception)
{
    char path[MAX_PATH];
    DWORD n = GetEnvironmentVariableA("CRASHLAB_DUMP", path, sizeof path);
    if (n == 0 || n >= sizeof path)
        lstrcpyA(path, "crash.dmp");
    HANDLE file = CreateFileA(path, GENERIC_WRITE, 0, NULL, CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL, NULL);
    if (file == INVALID_HANDLE_VALUE) {
        fprintf(stderr, "crashlab: cannot create %s (error %lu)\n", path, GetLastError());
        return EXCEPTION_CONTINUE_SEARCH;
    }
    MINIDUMP_EXCEPTION_INFORMATION info;
    info.ThreadId = GetCurrentThreadId();
    info.ExceptionPointers = exception;
    info.ClientPointers = FALSE;
    BOOL ok = MiniDumpWriteDump(GetCurrentProcess(), GetCurrentProcessId(), file, MiniDumpNormal, &info,
                                NULL, NULL);
    CloseHandle(file);
    fprintf(stderr, "crashlab: exception 0x%08lx at %p, minidump %s: %s\n",
            exception->ExceptionRecord->ExceptionCode, exception->ExceptionRecord->ExceptionAddress, path,
            ok ? "written" : "FAILED");
    fflush(stderr);
    return EXCEPTION_EXECUTE_HANDLER;
}

void install_dump_on_crash(void)
{
    SetUnhandledExceptionFilter(write_minidump);
}
