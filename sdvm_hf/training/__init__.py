"""Training and evaluation side: loglikelihood requests as tokens and padded batches.

``tokenize_requests`` tokenizes ``(context, continuation)`` requests exactly as
lm-evaluation-harness 0.4.13's ``HFLM`` does, ``collate`` and ``batches`` pad them into
batches with the masks that pick out the scored tokens, and ``check_single_token_labels``
checks that each answer label of the ``mc`` formulation is one token. Nothing here imports
torch, transformers or tokenizers: they are used when handed in (``return_tensors="pt"``
imports torch then).
"""

from sdvm_hf.training._batch import IGNORE_INDEX, KEYS, batches, collate
from sdvm_hf.training._tokenize import (
    DEFAULT_LABELS,
    TokenizedRequest,
    check_single_token_labels,
    pad_token_id,
    tokenize_requests,
)

__all__ = [
    "DEFAULT_LABELS",
    "IGNORE_INDEX",
    "KEYS",
    "TokenizedRequest",
    "batches",
    "check_single_token_labels",
    "collate",
    "pad_token_id",
    "tokenize_requests",
]
