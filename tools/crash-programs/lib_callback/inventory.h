/* inventory.h -- the interface of libinventory.so (tools/crash-programs/lib_callback). */
#ifndef INVENTORY_H
#define INVENTORY_H

struct supplier {
    const char *name;
    int discount_percent;
};

struct item {
    const char *sku;
    long total_cents;
    int quantity;
    const struct supplier *supplier; /* NULL for items nobody has sourced yet */
};

/* qsort comparator: cheapest unit price (after the supplier's discount) first. */
int inventory_compare_by_unit_price(const void *a, const void *b);

#endif
