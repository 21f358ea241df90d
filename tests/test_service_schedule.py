"""Scheduling of the round trip: how answered batches wait for the event loop to be quiet."""

import asyncio

from sdvm_hf.service._schedule import Finishing, quiet


def test_answered_batches_wait_for_a_quiet_turn_one_at_a_time() -> None:
    waiting: list[int] = []
    most = 0
    order: list[int] = []

    async def finish(number: int, finishing: Finishing) -> None:
        async def wait() -> int:
            nonlocal most
            waiting.append(number)
            most = max(most, len(waiting))
            try:
                return await quiet()
            finally:
                waiting.remove(number)
                order.append(number)

        await finishing.quiet(wait)

    async def main() -> None:
        finishing = Finishing()
        await asyncio.gather(*(finish(number, finishing) for number in range(16)))

    asyncio.run(main())
    assert most == 1  # side by side they would keep the loop busy for each other
    assert order == list(range(16))  # in the order they came
