/*
 * dump_on_crash.h -- install an unhandled-exception filter that writes a minidump of the
 * crash with dbghelp's MiniDumpWriteDump, the way a small Windows application without
 * Breakpad or Crashpad would do it.
 */
#ifndef DUMP_ON_CRASH_H
#define DUMP_ON_CRASH_H

/* The dump goes to the file named by the CRASHLAB_DUMP environment variable, else crash.dmp. */
void install_dump_on_crash(void);

#endif
