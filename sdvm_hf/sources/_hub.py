"""The Hub as a source: ``datasets.load_dataset`` and its cache, never ``trust_remote_code``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pyarrow as pa

from sdvm_hf.errors import InputError


class HubRows:
    """A split of a Hub dataset (or of a local folder laid out as one)."""

    def __init__(self, path: str | None, **kwargs: Any) -> None:
        """Read a split of the Hub dataset ``path``.

        ``kwargs`` go to ``load_dataset`` as they are: name, split, revision, cache_dir, token.
        """
        if path is None:
            raise InputError("give a Hub dataset path or data_files")
        self.path = path
        self.kwargs = kwargs

    def table(self) -> pa.Table:
        import datasets

        with _hub_hint(self.path):
            dataset = datasets.load_dataset(self.path, **self.kwargs)
        if dataset._indices is not None:
            dataset = dataset.flatten_indices()
        return dataset.data.table

    def batches(self, batch_size: int) -> Iterator[pa.Table]:
        import datasets

        with _hub_hint(self.path):
            stream = datasets.load_dataset(self.path, streaming=True, **self.kwargs)
            yield from stream.with_format("arrow").iter(batch_size=batch_size)

    def length(self) -> int | None:
        return None  # known only by reading: the caller counts


@contextmanager
def _hub_hint(path: str) -> Iterator[None]:
    """A Hub that cannot be reached says what works offline."""
    try:
        yield
    except ConnectionError as error:
        raise ConnectionError(
            f"{error}; offline, give the split's files (data_files=..., --data-files) or a "
            f"folder of Hub copies in $SDVM_HF_HUB_MIRROR ({path} under it)"
        ) from error
