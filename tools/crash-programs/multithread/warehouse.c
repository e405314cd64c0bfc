/*
 * warehouse.c -- seven threads, each parked somewhere different, when the
 * packer thread writes through a wild pointer:
 *
 *   main      pthread_join(packer)
 *   auditor   blocked in pthread_mutex_lock (main holds inventory_lock)
 *   shipper   blocked in pthread_cond_wait (the truck never arrives)
 *   clock     sleeping in nanosleep
 *   scanner   blocked in read() on a pipe nobody writes to
 *   conveyor  spinning in a busy loop, never entering the kernel
 *   packer    overruns shelf->counts[], which clobbers shelf->overflow, the
 *             pointer right after the array, then writes through it: SIGSEGV
 *             at a wild, non-NULL address.
 *
 * The packer waits until every other thread has said it is about to park,
 * then gives them 100 ms to get there, so each run looks the same.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define PARKED_THREADS 5

static pthread_mutex_t inventory_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t dock_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t truck_arrived = PTHREAD_COND_INITIALIZER;
static int truck_at_dock;
static atomic_int threads_parking;
static atomic_int belt_running = 1;
static int scanner_pipe[2];

struct crate {
    char label[16];
    int weight;
};

struct shelf {
    int counts[4];
    struct crate *overflow; /* where crates go when the shelf is full */
};

static void name_thread(const char *name)
{
    pthread_setname_np(pthread_self(), name);
}

static void about_to_park(void)
{
    atomic_fetch_add(&threads_parking, 1);
}

static void *auditor_main(void *unused)
{
    (void)unused;
    name_thread("auditor");
    about_to_park();
    pthread_mutex_lock(&inventory_lock); /* main holds it for ever */
    pthread_mutex_unlock(&inventory_lock);
    return NULL;
}

static void *shipper_main(void *unused)
{
    (void)unused;
    name_thread("shipper");
    pthread_mutex_lock(&dock_lock);
    about_to_park();
    while (!truck_at_dock)
        pthread_cond_wait(&truck_arrived, &dock_lock);
    pthread_mutex_unlock(&dock_lock);
    return NULL;
}

static void *clock_main(void *unused)
{
    (void)unused;
    name_thread("clock");
    about_to_park();
    for (;;) {
        struct timespec hour = {3600, 0};
        nanosleep(&hour, NULL);
    }
    return NULL;
}

static void *scanner_main(void *unused)
{
    (void)unused;
    char barcode[32];
    name_thread("scanner");
    about_to_park();
    while (read(scanner_pipe[0], barcode, sizeof barcode) > 0) {
    }
    return NULL;
}

__attribute__((noinline)) static unsigned long advance_belt(unsigned long position)
{
    return position * 6364136223846793005UL + 1442695040888963407UL;
}

static void *conveyor_main(void *unused)
{
    (void)unused;
    volatile unsigned long position = 1;
    name_thread("conveyor");
    about_to_park();
    while (atomic_load_explicit(&belt_running, memory_order_relaxed))
        position = advance_belt(position);
    return NULL;
}

__attribute__((noinline)) static void stack_crate(struct shelf *shelf, int slot, const char *label, int weight)
{
    shelf->counts[slot] += weight; /* no bounds check: slot 4 and 5 land on shelf->overflow */
    if (slot >= 3) {
        /* the shelf is full: the crate goes to the overflow area */
        shelf->overflow->weight = weight; /* the crash, once slot 5 has clobbered the pointer */
        for (size_t i = 0; i + 1 < sizeof shelf->overflow->label && label[i] != '\0'; i++)
            shelf->overflow->label[i] = label[i];
    }
}

__attribute__((noinline)) static void pack_order(struct shelf *shelf, const int *slots, int count)
{
    static const char *labels[] = {"plates", "cups", "bowls", "jugs", "pans", "lids"};
    for (int i = 0; i < count; i++)
        stack_crate(shelf, slots[i], labels[i % 6], 40 + i);
}

static void *packer_main(void *unused)
{
    (void)unused;
    static struct crate overflow_area;
    struct shelf shelf = {{0, 0, 0, 0}, &overflow_area};
    static const int slots[] = {0, 1, 2, 3, 5, 4};

    name_thread("packer");
    while (atomic_load(&threads_parking) < PARKED_THREADS) {
        struct timespec tick = {0, 1000 * 1000};
        nanosleep(&tick, NULL);
    }
    struct timespec settle = {0, 100 * 1000 * 1000};
    nanosleep(&settle, NULL);

    pack_order(&shelf, slots, 6);
    return NULL;
}

int main(void)
{
    pthread_t threads[6];
    void *(*const mains[6])(void *) = {auditor_main, shipper_main, clock_main,
                                       scanner_main, conveyor_main, packer_main};

    if (pipe(scanner_pipe) != 0)
        return 2;
    pthread_mutex_lock(&inventory_lock);
    for (int i = 0; i < 6; i++)
        pthread_create(&threads[i], NULL, mains[i], NULL);
    pthread_join(threads[5], NULL);
    return 0;
}
