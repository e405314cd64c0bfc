/*
 * ledger.c -- replays a day of bank transactions; a withdrawal that would
 * overdraw an account trips an assert(), and glibc's __assert_fail() calls
 * abort(), which raises SIGABRT from inside libc (pthread_kill).
 *
 * Built with -O2 -g and without NDEBUG, so the assert stays in.
 */
#include <assert.h>
#include <stdio.h>

struct account {
    const char *owner;
    long balance_cents;
};

struct transaction {
    int account;
    long amount_cents; /* negative for a withdrawal */
};

__attribute__((noinline)) static void post_transaction(struct account *accounts, const struct transaction *t)
{
    struct account *a = &accounts[t->account];
    a->balance_cents += t->amount_cents;
    assert(a->balance_cents >= 0 && "account overdrawn");
}

__attribute__((noinline)) static void replay_ledger(struct account *accounts, const struct transaction *log, int count)
{
    for (int i = 0; i < count; i++) {
        post_transaction(accounts, &log[i]);
        printf("%-6s %+8ld -> %8ld\n", accounts[log[i].account].owner, log[i].amount_cents,
               accounts[log[i].account].balance_cents);
    }
}

int main(void)
{
    struct account accounts[] = {{"alice", 50000}, {"bob", 1200}, {"carol", 0}};
    static const struct transaction log[] = {
        {0, -2500}, {2, 10000}, {1, -700}, {0, 4000}, {1, -900}, {2, -300},
    };

    setvbuf(stdout, NULL, _IONBF, 0);
    replay_ledger(accounts, log, (int)(sizeof log / sizeof log[0]));
    return 0;
}
