"""`in_order(function, items, threads=)`: `function` over `items` on a few threads, results in order.

For independent pieces of one job whose work mostly releases the GIL (numpy over the chunks of a
symbol file), taken by one consumer that needs them in order (the merge). At most `2 * threads`
pieces run ahead of the consumer, so a slow consumer does not pile results up; when the consumer
stops (done, an exception, a cancellation raised by `function`), nothing more starts and the
pieces under way are waited for, so no thread outlives the job.
"""

from __future__ import annotations

import itertools
import os
from collections import deque

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from concurrent.futures import Future
    from typing import TypeVar

    T = TypeVar("T")
    R = TypeVar("R")


def in_order(
    function: Callable[[T], R], items: Iterable[T], *, threads: int, name: str = "ordered"
) -> Iterator[tuple[T, R]]:
    """`(item, function(item))` for each item, in the items' order, computed on up to `threads`
    threads (no more than this machine's CPUs; one: in the caller's thread, one after the other)."""
    threads = min(threads, os.cpu_count() or 1)
    if threads <= 1:
        for item in items:
            yield item, function(item)
        return
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(threads, thread_name_prefix=name)
    ahead: deque[tuple[T, Future[R]]] = deque()
    following = iter(items)
    try:
        for item in itertools.islice(following, 2 * threads):
            ahead.append((item, pool.submit(function, item)))
        while ahead:
            item, future = ahead.popleft()
            result = future.result()
            for upcoming in itertools.islice(following, 1):
                ahead.append((upcoming, pool.submit(function, upcoming)))
            yield item, result
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
