/*
 * restock_report.c -- sorts a warehouse inventory by unit price with libc's
 * qsort() and the comparator from libinventory.so; one item has no supplier
 * and the comparator crashes on it (see libinventory.c).
 */
#include <stdio.h>
#include <stdlib.h>

#include "inventory.h"

static const struct supplier acme = {"Acme Fasteners", 10};
static const struct supplier northwind = {"Northwind Tools", 5};

static struct item stock[] = {
    {"BOLT-M8", 4500, 300, &acme},      {"NUT-M8", 1800, 300, &acme},
    {"DRILL-10", 8990, 10, &northwind}, {"WASHER-8", 900, 500, &acme},
    {"SAW-24", 12990, 5, &northwind},   {"GLUE-50", 2250, 45, NULL},
    {"TAPE-19", 1575, 63, &northwind},  {"HINGE-60", 3600, 40, &acme},
};

__attribute__((noinline)) static void print_restock_report(struct item *items, size_t count)
{
    qsort(items, count, sizeof items[0], inventory_compare_by_unit_price);
    for (size_t i = 0; i < count; i++)
        printf("%-10s %6ld cents for %d\n", items[i].sku, items[i].total_cents, items[i].quantity);
}

int main(void)
{
    print_restock_report(stock, sizeof stock / sizeof stock[0]);
    return 0;
}
