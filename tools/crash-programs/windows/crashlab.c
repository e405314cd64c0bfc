/*
 * crashlab.c -- a small Windows x64 program that crashes in one of five ways, chosen by its
 * first argument; the unhandled-exception filter of dump_on_crash.c writes the minidump.
 *
 *   bad_read        sums the stock of a linked inventory whose third node's `next` pointer
 *                   was overwritten with a small integer: a read access violation
 *   null_call       dispatches a command to a handler table whose "remove" slot was never
 *                   filled: a call through NULL (the instruction pointer becomes 0)
 *   divide_zero     averages the latency samples of an empty report with an integer
 *                   division: EXCEPTION_INT_DIVIDE_BY_ZERO
 *   worker_fault    a worker thread parses records and writes through the NULL slot of a
 *                   lookup that failed, while the main thread waits for it in
 *                   WaitForSingleObject and an idle thread waits for an event nobody sets
 *   deep_recursion  walks a degenerate tree 120 levels deep whose deepest node has a wild
 *                   child pointer: the fault is 120 frames down
 *
 * Everything that decides the crash comes from the command line or from data built at run
 * time, so that neither -O1 nor -O2 folds it away.
 */
#include <windows.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump_on_crash.h"

#define NOINLINE __attribute__((noinline))

/* ---------------------------------------------------------------- bad_read */

struct item {
    const char *name;
    int stock;
    struct item *next;
};

static int stock_of(const struct item *item)
{
    return item->stock;
}

static NOINLINE long total_stock(const struct item *first)
{
    long total = 0;
    for (const struct item *item = first; item != NULL; item = item->next)
        total += stock_of(item);
    return total;
}

static int bad_read(int argc, char **argv)
{
    static const char *names[] = {"bolts", "nuts", "washers", "rivets", "hinges"};
    struct item *items = calloc(5, sizeof *items);
    for (int i = 0; i < 5; i++) {
        items[i].name = names[i];
        items[i].stock = 10 * (i + 1) + argc;
        items[i].next = i + 1 < 5 ? &items[i + 1] : NULL;
    }
    (void)argv;
    items[2].next = (struct item *)(uintptr_t)0x40; /* a stray store of a count into a pointer */
    printf("total stock: %ld\n", total_stock(items));
    return 0;
}

/* ---------------------------------------------------------------- null_call */

typedef int (*handler_fn)(const char *arg);

static NOINLINE int cmd_add(const char *arg)
{
    return printf("add %s\n", arg);
}

static NOINLINE int cmd_list(const char *arg)
{
    return printf("list %s\n", arg);
}

static handler_fn handlers[3] = {cmd_add, cmd_list, NULL /* "remove" was never registered */};
static const char *command_names[3] = {"add", "list", "remove"};

static NOINLINE int dispatch(const char *command, const char *arg)
{
    for (int i = 0; i < 3; i++) {
        if (strcmp(command_names[i], command) == 0) {
            int status = handlers[i](arg);
            return status < 0 ? 1 : 0;
        }
    }
    return 2;
}

static int null_call(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    const char *script[] = {"add", "list", "remove"};
    int failures = 0;
    for (int i = 0; i < 3; i++)
        failures += dispatch(script[i], "widget");
    return failures;
}

/* ---------------------------------------------------------------- divide_zero */

static NOINLINE int parse_samples(const char *text, int *out, int max)
{
    int count = 0;
    while (*text != '\0' && count < max) {
        char *end;
        long value = strtol(text, &end, 10);
        if (end == text)
            break;
        out[count++] = (int)value;
        text = *end == ',' ? end + 1 : end;
    }
    return count;
}

static NOINLINE int average_latency(const int *samples, int count)
{
    int sum = 0;
    for (int i = 0; i < count; i++)
        sum += samples[i];
    return sum / count;
}

static int divide_zero(int argc, char **argv)
{
    int samples[16];
    /* the report of the quiet shift has no samples at all */
    const char *report = argc > 2 ? argv[2] : "";
    int count = parse_samples(report, samples, 16);
    printf("average latency: %d ms\n", average_latency(samples, count));
    return 0;
}

/* ---------------------------------------------------------------- worker_fault */

struct slot {
    char key[16];
    char value[48];
};

static struct slot *table[4];

static struct slot *lookup(const char *key)
{
    for (int i = 0; i < 4; i++)
        if (table[i] != NULL && strcmp(table[i]->key, key) == 0)
            return table[i];
    return NULL;
}

static NOINLINE void store_field(const char *key, const char *value)
{
    struct slot *slot = lookup(key);
    /* the author assumed every key had been registered */
    strncpy(slot->value, value, sizeof slot->value - 1);
}

static NOINLINE void parse_record(const char *record)
{
    const char *equals = strchr(record, '=');
    char key[16];
    if (equals == NULL || equals - record >= (ptrdiff_t)sizeof key)
        return;
    memcpy(key, record, equals - record);
    key[equals - record] = '\0';
    store_field(key, equals + 1);
}

static HANDLE never_set;

static DWORD WINAPI idle_main(void *unused)
{
    (void)unused;
    WaitForSingleObject(never_set, INFINITE);
    return 0;
}

static DWORD WINAPI parser_main(void *records)
{
    Sleep(200); /* let the main and idle threads reach their waits */
    for (const char **record = records; *record != NULL; record++)
        parse_record(*record);
    return 0;
}

static int worker_fault(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    static struct slot name_slot = {"name", ""};
    static const char *records[] = {"name=conveyor", "speed=12", NULL};
    table[0] = &name_slot;
    never_set = CreateEventA(NULL, TRUE, FALSE, NULL);
    HANDLE idle = CreateThread(NULL, 0, idle_main, NULL, 0, NULL);
    HANDLE parser = CreateThread(NULL, 0, parser_main, (void *)records, 0, NULL);
    WaitForSingleObject(parser, INFINITE);
    CloseHandle(parser);
    CloseHandle(idle);
    return 0;
}

/* ---------------------------------------------------------------- deep_recursion */

struct node {
    int weight;
    struct node *left;
    struct node *right;
};

static NOINLINE long subtree_weight(const struct node *node)
{
    if (node == NULL)
        return 0;
    long left = subtree_weight(node->left);
    long right = subtree_weight(node->right);
    return left + right + node->weight;
}

static int deep_recursion(int argc, char **argv)
{
    (void)argv;
    enum { DEPTH = 120 };
    struct node *nodes = calloc(DEPTH, sizeof *nodes);
    for (int i = 0; i < DEPTH; i++) {
        nodes[i].weight = i + argc;
        nodes[i].left = i + 1 < DEPTH ? &nodes[i + 1] : NULL;
    }
    nodes[DEPTH - 1].right = (struct node *)(uintptr_t)0x18; /* a wild child */
    printf("weight: %ld\n", subtree_weight(nodes));
    return 0;
}

/* ---------------------------------------------------------------- main */

static const struct {
    const char *name;
    int (*run)(int, char **);
} cases[] = {
    {"bad_read", bad_read},         {"null_call", null_call},           {"divide_zero", divide_zero},
    {"worker_fault", worker_fault}, {"deep_recursion", deep_recursion},
};

int main(int argc, char **argv)
{
    install_dump_on_crash();
    if (argc >= 2)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            if (strcmp(argv[1], cases[i].name) == 0)
                return cases[i].run(argc, argv);
    fprintf(stderr, "usage: crashlab bad_read|null_call|divide_zero|worker_fault|deep_recursion\n");
    return 2;
}
