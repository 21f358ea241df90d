"""Padded batches of tokenized requests, laid out as lm-eval's ``HFLM`` scores them.

Row ``i`` of a batch holds request ``i``'s model input (``input_ids``, padded to the longest
in the batch), ``attention_mask`` (1 on its tokens), ``continuation_mask`` (1 at the
positions whose next-token logits score a continuation token: the last
``len(continuation_tokens)`` positions of the input, the positions ``HFLM._select_cont_toks``
keeps) and ``target_ids`` (the continuation token scored at each such position, -100
elsewhere), so that ``log_softmax(logits).gather(-1, target_ids.clamp(min=0)[..., None])``
summed under the mask is lm-eval's loglikelihood. ``index``, ``doc_id`` and ``idx`` map each
row back to its request (-1 where a request has no ``doc_id`` or ``idx``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Literal

import numpy as np

from sdvm_hf.errors import InputError
from sdvm_hf.training._tokenize import TokenizedRequest, pad_token_id, tokenize_requests

__all__ = ["IGNORE_INDEX", "KEYS", "batches", "collate"]

IGNORE_INDEX = -100
"""``target_ids`` where nothing is scored (PyTorch's ``cross_entropy`` default)."""

KEYS = (
    "input_ids",
    "attention_mask",
    "continuation_mask",
    "target_ids",
    "index",
    "doc_id",
    "idx",
)
"""The keys of every batch, in order."""

Padding = Literal["right", "left"]
Tensors = Literal["np", "pt"] | None


def collate(
    requests: Sequence[TokenizedRequest],
    *,
    pad_id: int = 0,
    padding_side: Padding = "right",
    return_tensors: Tensors = None,
) -> dict[str, Any]:
    """One padded batch of tokenized requests (see the module for its keys).

    ``padding_side`` ``"right"`` (lm-eval's, for causal models) or ``"left"``;
    ``return_tensors`` ``None`` for lists, ``"np"`` for numpy arrays, ``"pt"`` for torch
    tensors (torch is imported then, and only then).
    """
    if padding_side not in ("right", "left"):
        raise InputError(f"padding_side should be 'right' or 'left', got {padding_side!r}")
    if return_tensors not in (None, "np", "pt"):
        raise InputError(f"return_tensors should be None, 'np' or 'pt', got {return_tensors!r}")
    if not requests:
        raise InputError("collate needs at least one tokenized request")
    inputs = [request.input_tokens for request in requests]
    width = max(len(tokens) for tokens in inputs)
    rows = len(inputs)
    input_ids = np.full((rows, width), pad_id, dtype=np.int64)
    attention = np.zeros((rows, width), dtype=np.int64)
    scored = np.zeros((rows, width), dtype=np.int64)
    targets = np.full((rows, width), IGNORE_INDEX, dtype=np.int64)
    for row, (request, tokens) in enumerate(zip(requests, inputs, strict=True)):
        start = 0 if padding_side == "right" else width - len(tokens)
        end = start + len(tokens)
        count = len(request.continuation_tokens)
        input_ids[row, start:end] = tokens
        attention[row, start:end] = 1
        scored[row, end - count : end] = 1
        targets[row, end - count : end] = request.continuation_tokens
    ids = {
        "index": [request.index for request in requests],
        "doc_id": [-1 if r.doc_id is None else int(r.doc_id) for r in requests],
        "idx": [-1 if r.idx is None else int(r.idx) for r in requests],
    }
    arrays = {
        "input_ids": input_ids,
        "attention_mask": attention,
        "continuation_mask": scored,
        "target_ids": targets,
        **{key: np.asarray(value, dtype=np.int64) for key, value in ids.items()},
    }
    if return_tensors == "np":
        return arrays
    if return_tensors == "pt":
        try:
            import torch
        except ImportError as error:
            raise ImportError(
                "return_tensors='pt' needs torch: pip install 'sdvm-hf[torch]'"
            ) from error
        return {key: torch.from_numpy(value) for key, value in arrays.items()}
    return {key: value.tolist() for key, value in arrays.items()}


def batches(
    requests: Iterable[Any] | Sequence[TokenizedRequest],
    tokenizer: Any = None,
    *,
    batch_size: int = 32,
    max_length: int | None = None,
    pad_id: int | None = None,
    padding_side: Padding = "right",
    return_tensors: Tensors = None,
    by_length: bool = False,
) -> Iterator[dict[str, Any]]:
    """Requests (tokenized here with ``tokenizer`` and ``max_length``, or already) in batches.

    ``pad_id`` defaults to the tokenizer's padding id, else 0. With ``by_length``, the
    longest requests come first, as lm-eval orders them (less padding; the ids in each batch
    map scores back); otherwise batches keep the requests' order.
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise InputError(f"batch_size should be a positive int, got {batch_size!r}")
    items = list(requests)
    if items and not all(isinstance(item, TokenizedRequest) for item in items):
        if tokenizer is None:
            raise InputError("batches of untokenized requests need a tokenizer")
        items = tokenize_requests(items, tokenizer, max_length=max_length)
    tokenized: list[TokenizedRequest] = items
    if by_length:  # lm-eval's Collator: longest first, then by the tokens themselves
        tokenized = sorted(tokenized, key=_length_order)
    pad = pad_id if pad_id is not None else pad_token_id(tokenizer)
    for start in range(0, len(tokenized), batch_size):
        yield collate(
            tokenized[start : start + batch_size],
            pad_id=pad,
            padding_side=padding_side,
            return_tensors=return_tensors,
        )


def _length_order(request: TokenizedRequest) -> tuple[int, tuple[int, ...]]:
    tokens = request.context_tokens + request.continuation_tokens
    return -len(tokens), tuple(tokens)
