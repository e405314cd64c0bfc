/*
 * render_farm.c -- the program behind Crash Inspector's bundled sample crash.
 *
 * A toy thumbnail renderer with three threads:
 *   main      starts the others, then waits in pthread_join for the renderer;
 *   loader    waits in pthread_cond_wait for decode jobs that never come;
 *   renderer  tints each thumbnail tile row by row, and crashes on the tile
 *             whose pixels the loader never decoded: a write through a NULL
 *             pixel buffer.  The write happens in store_pixel(), inlined into
 *             blend_row(), inlined into render_tile(), so the crashing frame
 *             has two inline frames on top of a real one.
 *
 * Built by tools/make-crashes with -O2 -g (and crash_reporter.c linked in).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* One pixel: 0xAABBGGRR. */
typedef uint32_t pixel;

struct tile {
    const char *name;
    int width, height;
    pixel *pixels; /* NULL until the loader has decoded the image */
};

struct decode_queue {
    pthread_mutex_t lock;
    pthread_cond_t has_work;
    pthread_cond_t loader_ready;
    int pending_jobs;
    int loader_waiting;
};

static struct decode_queue queue = {
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0,
};

static struct tile gallery[3];

/* The loader would decode images; in this sample it only ever waits. */
static void *thumbnail_loader_main(void *unused)
{
    (void)unused;
    pthread_setname_np(pthread_self(), "loader");
    pthread_mutex_lock(&queue.lock);
    queue.loader_waiting = 1;
    pthread_cond_signal(&queue.loader_ready);
    while (queue.pending_jobs == 0)
        pthread_cond_wait(&queue.has_work, &queue.lock);
    pthread_mutex_unlock(&queue.lock);
    return NULL;
}

static inline pixel warm_tint(int x, int y, int strength)
{
    uint32_t r = (uint32_t)(128 + (x * strength) / 8) & 0xff;
    uint32_t g = (uint32_t)(96 + (y * strength) / 16) & 0xff;
    uint32_t b = (uint32_t)(64 + ((x ^ y) & 31));
    return r | g << 8 | b << 16;
}

static inline void store_pixel(pixel *row, int x, pixel colour, uint32_t opacity)
{
    pixel premultiplied = colour * opacity / 255u;
    row[x] = premultiplied | opacity << 24; /* the crash: row is NULL for an undecoded tile */
}

static inline void blend_row(struct tile *tile, int y, int strength)
{
    pixel *row = tile->pixels + (size_t)y * (size_t)tile->width;
    for (int x = 0; x < tile->width; x++)
        store_pixel(row, x, warm_tint(x, y, strength), 200);
}

__attribute__((noinline)) static void render_tile(struct tile *tile, int strength)
{
    for (int y = 0; y < tile->height; y++)
        blend_row(tile, y, strength);
}

static void *render_worker_main(void *arg)
{
    struct tile *tiles = arg;
    pthread_setname_np(pthread_self(), "renderer");

    /* Give main time to settle in pthread_join, so every thread is parked
     * in a recognisable place when the renderer crashes. */
    struct timespec pause = {0, 100 * 1000 * 1000};
    nanosleep(&pause, NULL);

    for (int i = 0; i < 3; i++) {
        render_tile(&tiles[i], 3 + i);
        printf("rendered %s\n", tiles[i].name);
    }
    return NULL;
}

__attribute__((noinline)) static void load_gallery(void)
{
    static const char *names[3] = {"harbour.jpg", "meadow.jpg", "sunset.jpg"};
    for (int i = 0; i < 3; i++) {
        gallery[i].name = names[i];
        gallery[i].width = 64;
        gallery[i].height = 48;
        /* sunset.jpg is left for the loader, which never gets to it */
        gallery[i].pixels = i < 2 ? calloc(64 * 48, sizeof(pixel)) : NULL;
    }
}

int main(void)
{
    pthread_t loader, renderer;

    setvbuf(stdout, NULL, _IONBF, 0);
    load_gallery();

    pthread_create(&loader, NULL, thumbnail_loader_main, NULL);
    pthread_mutex_lock(&queue.lock);
    while (!queue.loader_waiting)
        pthread_cond_wait(&queue.loader_ready, &queue.lock);
    pthread_mutex_unlock(&queue.lock);

    pthread_create(&renderer, NULL, render_worker_main, gallery);
    pthread_join(renderer, NULL);
    pthread_join(loader, NULL);
    return 0;
}
