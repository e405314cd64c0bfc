/*
 * libinventory.c -- a shared library whose qsort comparator crashes.
 *
 * restock_report (the executable) hands inventory_compare_by_unit_price() to
 * libc's qsort(), so at the crash the stack runs executable -> libc (qsort's
 * merge sort) -> this library.  The comparator asks discounted_unit_price()
 * for each item, which reads the item's supplier without checking for NULL.
 */
#include "inventory.h"

__attribute__((noinline)) static long discounted_unit_price(const struct item *item)
{
    long unit = item->total_cents / (item->quantity > 0 ? item->quantity : 1);
    /* the crash: item->supplier is NULL for an unsourced item */
    return unit - unit * item->supplier->discount_percent / 100;
}

int inventory_compare_by_unit_price(const void *a, const void *b)
{
    long pa = discounted_unit_price(a);
    long pb = discounted_unit_price(b);
    return (pa > pb) - (pa < pb);
}
