"""``in_order``: work run in threads, results handed back in the items' order (issue #28)."""

import threading
import time
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdvm_hf.sources._ahead import in_order


@settings(deadline=None, max_examples=40)
@given(
    delays=st.lists(st.integers(0, 3), max_size=12),
    threads=st.integers(1, 4),
)
def test_results_come_in_order_whatever_finishes_first(delays: list[int], threads: int) -> None:
    def work(item: tuple[int, int]) -> int:
        time.sleep(item[1] / 1000)  # later items often finish first
        return item[0] * 10

    items = list(enumerate(reversed(delays)))
    assert list(in_order(work, items, threads)) == [n * 10 for n, _ in items]


def test_no_more_than_one_item_beyond_the_threads_is_taken_ahead() -> None:
    taken: list[int] = []

    def items() -> Iterator[int]:
        for n in range(100):
            taken.append(n)
            yield n

    results = in_order(lambda n: n, items(), threads=2)
    assert next(results) == 0
    assert len(taken) <= 3 + 1  # two running, one waiting, the one just handed back
    results.close()


def test_an_error_of_the_work_comes_where_its_result_would() -> None:
    def work(n: int) -> int:
        if n == 3:
            raise ValueError("item 3 is bad")
        return n

    got: list[int] = []
    with pytest.raises(ValueError, match="item 3 is bad"):
        for n in in_order(work, range(10), threads=2):
            got.append(n)
    assert got == [0, 1, 2]


def test_an_error_taking_the_next_item_comes_after_the_items_before_it() -> None:
    def items() -> Iterator[int]:
        yield from range(4)
        raise OSError("the file ended early")

    got: list[int] = []
    with pytest.raises(OSError, match="the file ended early"):
        for n in in_order(lambda n: n, items(), threads=3):
            got.append(n)
    assert got == [0, 1, 2, 3]


def test_closing_early_leaves_no_thread_running() -> None:
    before = {t.name for t in threading.enumerate()}

    def slow(n: int) -> int:
        time.sleep(0.01)
        return n

    results = in_order(slow, range(1000), threads=2)
    assert [next(results) for _ in range(3)] == [0, 1, 2]
    results.close()
    left = {t.name for t in threading.enumerate()} - before
    assert not any(name.startswith("sdvm_hf-parse") for name in left)
