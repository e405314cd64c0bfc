/*
 * crash_reporter.c -- a tiny launch-at-crash client for Crashpad's handler.
 *
 * Linked into every crash program that tools/make-crashes builds.  At start-up
 * a constructor reads its settings from the environment:
 *
 *   CRASH_REPORTER_HANDLER    path of Crashpad's crashpad_handler executable
 *   CRASH_REPORTER_DATABASE   Crashpad database directory the report goes to
 *   CRASH_REPORTER_REPORT_ID  optional: UUID to give the report (--report-id)
 *   CRASH_REPORTER_PROGRAM    optional: value of the "program" annotation
 *
 * and installs a handler for the crash signals.  When one arrives, the
 * handler fills a Crashpad ExceptionInformation record (addresses of the
 * siginfo_t and ucontext_t the kernel gave us, and our thread id) in static
 * memory, allows its child to ptrace it, forks and execs
 *
 *   crashpad_handler --database=DB --no-periodic-tasks [--report-id=UUID]
 *                    [--annotation=program=NAME]
 *                    --trace-parent-with-exception=0x<address of the record>
 *
 * and waits for it.  The handler attaches to us with ptrace, reads the record,
 * and writes a minidump whose exception stream holds the signal context (the
 * code that faulted, not these frames).  Then the signal's default action is
 * restored and the signal delivered again, so the process dies of it as it
 * would have without us.
 *
 * Only async-signal-safe calls are made in the handler: no malloc, no stdio,
 * raw clone() instead of glibc's fork() (whose atfork handlers take locks).
 * Without the two required settings nothing is installed and the program
 * crashes as usual (that is how gdb runs it for the ground truth).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef PR_SET_PTRACER
#define PR_SET_PTRACER 0x59616d61
#endif

/* Crashpad's ExceptionInformation (util/linux/exception_information.h):
 * packed, two 64-bit addresses and a pid_t. */
struct crashpad_exception_information {
    uint64_t siginfo_address;
    uint64_t context_address;
    int32_t thread_id;
} __attribute__((packed));

static struct crashpad_exception_information exception_information;

#define ARG_MAX_LEN 1024
static char handler_path[ARG_MAX_LEN];
static char database_arg[ARG_MAX_LEN];
static char report_id_arg[128];
static char annotation_arg[256];
static char exception_arg[64];
static char *handler_argv[8];
static char *handler_envp[] = {"LANG=C.UTF-8", NULL};

static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL,
                                    SIGABRT, SIGTRAP, SIGSYS};

/* An alternate signal stack for the main thread, so a stack overflow there
 * can still be reported. */
static char alternate_stack[64 * 1024];

static void say(const char *text)
{
    size_t len = strlen(text);
    while (len > 0) {
        ssize_t n = write(STDERR_FILENO, text, len);
        if (n <= 0) {
            if (n < 0 && errno == EINTR)
                continue;
            return;
        }
        text += n;
        len -= (size_t)n;
    }
}

/* Unsigned integer to text, async-signal-safe. */
static char *format_number(char *out, uint64_t value, unsigned base)
{
    char digits[24];
    int n = 0;
    do {
        digits[n++] = "0123456789abcdef"[value % base];
        value /= base;
    } while (value != 0);
    while (n > 0)
        *out++ = digits[--n];
    *out = '\0';
    return out;
}

static void copy_arg(char *out, size_t size, const char *prefix, const char *value)
{
    size_t p = strlen(prefix), v = strlen(value);
    if (p + v + 1 > size) {
        say("crash_reporter: setting too long, ignored\n");
        out[0] = '\0';
        return;
    }
    memcpy(out, prefix, p);
    memcpy(out + p, value, v + 1);
}

static void report_crash(int signo, siginfo_t *info, void *context)
{
    int saved_errno = errno;
    pid_t self = (pid_t)syscall(SYS_getpid);
    pid_t tid = (pid_t)syscall(SYS_gettid);

    exception_information.siginfo_address = (uint64_t)(uintptr_t)info;
    exception_information.context_address = (uint64_t)(uintptr_t)context;
    exception_information.thread_id = tid;

    /* The handler must be allowed to ptrace us: make us dumpable and, where
     * Yama is in force, name ourselves as the ptracer (Yama accepts any
     * descendant of the named process, i.e. the child we are about to fork).
     * Without Yama PR_SET_PTRACER fails with EINVAL, which is harmless. */
    if (prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 1)
        prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
    prctl(PR_SET_PTRACER, (unsigned long)self, 0, 0, 0);

    say("crash_reporter: caught signal, starting crashpad_handler\n");
    long child = syscall(SYS_clone, (unsigned long)SIGCHLD, 0UL, 0UL, 0UL, 0UL);
    if (child == 0) {
        syscall(SYS_execve, handler_path, handler_argv, handler_envp);
        say("crash_reporter: could not exec crashpad_handler\n");
        syscall(SYS_exit_group, 127);
    }
    if (child > 0) {
        int status = 0;
        while (waitpid((pid_t)child, &status, __WALL) < 0 && errno == EINTR) {
        }
        char line[96] = "crash_reporter: crashpad_handler exited with status ";
        char *end = format_number(line + strlen(line),
                                  (uint64_t)(WIFEXITED(status) ? WEXITSTATUS(status) : 256 + WTERMSIG(status)), 10);
        end[0] = '\n';
        end[1] = '\0';
        say(line);
    } else {
        say("crash_reporter: clone failed\n");
    }
    prctl(PR_SET_PTRACER, 0UL, 0, 0, 0);

    /* Die of the signal as if we had never been here. */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(signo, &dfl, NULL);
    if (info->si_code <= 0) {
        /* Sent by kill/tgkill/raise/abort: send it again; it is delivered
         * when this handler returns and the signal is unblocked.  A fault
         * (si_code > 0) simply happens again when the instruction re-runs. */
        syscall(SYS_rt_tgsigqueueinfo, self, tid, signo, info);
    }
    errno = saved_errno;
}

__attribute__((constructor)) static void install_crash_reporter(void)
{
    const char *handler = getenv("CRASH_REPORTER_HANDLER");
    const char *database = getenv("CRASH_REPORTER_DATABASE");
    const char *report_id = getenv("CRASH_REPORTER_REPORT_ID");
    const char *program = getenv("CRASH_REPORTER_PROGRAM");
    if (handler == NULL || database == NULL || handler[0] == '\0' || database[0] == '\0')
        return;

    int n = 0;
    copy_arg(handler_path, sizeof handler_path, "", handler);
    handler_argv[n++] = handler_path;
    copy_arg(database_arg, sizeof database_arg, "--database=", database);
    handler_argv[n++] = database_arg;
    handler_argv[n++] = "--no-periodic-tasks";
    if (report_id != NULL && report_id[0] != '\0') {
        copy_arg(report_id_arg, sizeof report_id_arg, "--report-id=", report_id);
        handler_argv[n++] = report_id_arg;
    }
    if (program != NULL && program[0] != '\0') {
        copy_arg(annotation_arg, sizeof annotation_arg, "--annotation=program=", program);
        handler_argv[n++] = annotation_arg;
    }
    char *end = stpcpy(exception_arg, "--trace-parent-with-exception=0x");
    format_number(end, (uint64_t)(uintptr_t)&exception_information, 16);
    handler_argv[n++] = exception_arg;
    handler_argv[n] = NULL;

    stack_t ss;
    memset(&ss, 0, sizeof ss);
    ss.ss_sp = alternate_stack;
    ss.ss_size = sizeof alternate_stack;
    sigaltstack(&ss, NULL);

    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = report_crash;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < sizeof crash_signals / sizeof crash_signals[0]; i++)
        sigaction(crash_signals[i], &action, NULL);
}
