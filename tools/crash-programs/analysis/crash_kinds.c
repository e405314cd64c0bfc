/* crash_kinds.c -- one kind of crash per build, for the crash-analysis tests.
 *
 * tools/make-crashes compiles this file once per case with one of these defined:
 *   KIND_NULL_READ      read a field through a null struct pointer        (SIGSEGV)
 *   KIND_NULL_WRITE     write a field through a null struct pointer       (SIGSEGV)
 *   KIND_NON_CANONICAL  read through a pointer outside the 48-bit space   (SIGSEGV / SI_KERNEL)
 *   KIND_NULL_CALL      call a function pointer of a null struct           (SIGSEGV)
 *   KIND_DIV_ZERO       integer division by zero                           (SIGFPE / FPE_INTDIV)
 *   KIND_STACK_PUSH     unbounded recursion on a thread's 64 KiB stack, which overflows
 *                       into the guard page on a push                      (SIGSEGV)
 * The pointers live in volatile globals so the compiler cannot see they are bad and keeps
 * the faulting instruction a plain load, store, call or idiv.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>

struct record {
    long id;
    long balance;
    long limit;
};

struct device_ops {
    int (*open)(int);
    int (*close)(int);
};

static struct record *volatile current_record;          /* never set: null */
static struct device_ops *volatile active_ops;            /* never set: null */
static struct record *volatile poisoned_record = (struct record *)0xdead000000001000UL;
static volatile int divisor;                               /* zero */

__attribute__((noinline)) long read_balance(void) { return current_record->balance; }

__attribute__((noinline)) void write_limit(long limit) { current_record->limit = limit; }

__attribute__((noinline)) long read_poisoned(void) { return poisoned_record->id; }

__attribute__((noinline)) int close_device(int fd) { return active_ops->close(fd) + 1; }

__attribute__((noinline)) int average(int total) { return total / divisor; }

/* Three values live across the recursive call, so each level pushes three callee-saved
 * registers after its return address: 32 bytes a level, written one 8-byte slot at a time. */
__attribute__((noinline)) unsigned long descend(unsigned long depth, unsigned long salt, unsigned long mix)
{
    if (depth == 0)
        return salt;
    unsigned long below = descend(depth + 1, salt * 31 + depth, mix ^ (depth << 3));
    return (below ^ depth) * (salt | 1) + mix;
}

/* One more 16-byte frame (return address and alignment) before the recursion starts. */
__attribute__((noinline)) unsigned long hop(unsigned long depth, unsigned long salt, unsigned long mix)
{
    return descend(depth, salt, mix) + 1;
}

/* Recurse until the stack runs into its guard page, `floor` being the lowest usable address.
 * Most of the stack is skipped with one variable-length array, so only a few dozen levels are
 * on it when it overflows. The first return address goes 8 bytes below the stack pointer at
 * the call and each level of descend fills four 8-byte slots (return address, three pushes):
 * the first slot below the floor must be a push, not a return address, so the recursion
 * starts 16 bytes lower (through hop) when it would be one. */
__attribute__((noinline)) unsigned long overflow_from(unsigned long floor)
{
    unsigned long sp;
    __asm__ volatile("mov %%rsp, %0" : "=r"(sp));
    char skip[(sp - floor - 1024) & ~15UL];
    __asm__ volatile("" : : "r"(skip) : "memory");
    __asm__ volatile("mov %%rsp, %0" : "=r"(sp));
    if ((((sp - floor) / 8) & 3) == 0)
        return hop(1, floor, sp);
    return descend(1, floor, sp);
}

static char overflow_signal_stack[16384];

/* A thread with a small stack and its own signal stack (the crash handler runs on it). */
static void *overflow_thread(void *unused)
{
    (void)unused;
    stack_t ss = {.ss_sp = overflow_signal_stack, .ss_size = sizeof overflow_signal_stack};
    sigaltstack(&ss, NULL);
    pthread_attr_t attr;
    void *stack_low;
    size_t stack_size;
    pthread_getattr_np(pthread_self(), &attr);
    pthread_attr_getstack(&attr, &stack_low, &stack_size);
    return (void *)overflow_from((unsigned long)stack_low);
}

__attribute__((noinline)) unsigned long overflow_on_push(void)
{
    pthread_attr_t attr;
    pthread_t thread;
    void *result = NULL;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    pthread_create(&thread, &attr, overflow_thread, NULL);
    pthread_join(thread, &result);
    return (unsigned long)result;
}

int main(void)
{
    long result = 0;
#if defined(KIND_NULL_READ)
    result = read_balance();
#elif defined(KIND_NULL_WRITE)
    write_limit(500);
#elif defined(KIND_NON_CANONICAL)
    result = read_poisoned();
#elif defined(KIND_NULL_CALL)
    result = close_device(3);
#elif defined(KIND_DIV_ZERO)
    result = average(1200);
#elif defined(KIND_STACK_PUSH)
    result = (long)overflow_on_push();
#else
#error "define one KIND_*"
#endif
    printf("%ld\n", result);
    return 0;
}
