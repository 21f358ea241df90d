"""Tokenized, padded batches of loglikelihood requests, against lm-eval's own tokenization.

The tokenizers are offline: a byte-level BPE trained here on the bundled real HellaSwag rows
(``tokenizers``), the same behind a stand-in of a ``transformers`` tokenizer that adds a BOS
token, and plain callables. lm-eval's side is its real ``TemplateLM.loglikelihood`` and
``_encode_pair`` (``lm_eval.api.model``, which needs no model and no torch), run with a
``tok_encode`` that does what ``HFLM.tok_encode`` does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from lm_eval.api.model import TemplateLM

from sdvm_hf import load_hellaswag
from sdvm_hf.training import (
    IGNORE_INDEX,
    KEYS,
    TokenizedRequest,
    batches,
    check_single_token_labels,
    collate,
    tokenize_requests,
)

tokenizers = pytest.importorskip("tokenizers", reason="tokenizers is in the dev extra")


@pytest.fixture(scope="module")
def bpe() -> Any:
    """A byte-level BPE (GPT-2's scheme) trained on real HellaSwag text and MC prompts."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    texts = [s.context + " " + " ".join(s.choices) for s in load_hellaswag(bundled=True)]
    texts += ["Question: which one?\nAnswer: A B C D E"] * 50
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=700,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=["<pad>", "<s>"],
        show_progress=False,
    )
    tokenizer.train_from_iterator(texts, trainer)
    return tokenizer


class PreTrainedTokenizerBase:
    """A stand-in named as transformers' base class (transformers is not installed)."""


PreTrainedTokenizerBase.__module__ = "transformers.tokenization_utils_base"


class WithBos(PreTrainedTokenizerBase):
    """A transformers-like tokenizer: ``encode`` adds BOS (id 1) unless told not to."""

    bos_token_id = 1
    eos_token_id = None
    pad_token_id = 0

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        ids = list(self.inner.encode(text, add_special_tokens=False).ids)
        return [self.bos_token_id, *ids] if add_special_tokens else ids

    def decode(self, token: int) -> str:
        return str(self.inner.id_to_token(token))


def hflm_tok_encode(tokenizer: Any) -> Callable[..., list[int]]:
    """``HFLM.tok_encode`` with ``add_bos_token=None``, for a tokenizer of either kind."""
    hf = isinstance(tokenizer, WithBos)

    def encode(string: str, add_special_tokens: bool | None = None, **_: Any) -> list[int]:
        kwargs = {} if add_special_tokens is None else {"add_special_tokens": add_special_tokens}
        if hf and add_special_tokens is None and string.startswith(tokenizer.decode(1)):
            kwargs["add_special_tokens"] = False
        if hf:
            return list(tokenizer.encode(string, **kwargs))
        return list(tokenizer.encode(string, **kwargs).ids)

    return encode


def lm_eval_pairs(
    tokenizer: Any, pairs: list[tuple[str, str]], prefix: int = 1
) -> list[tuple[list[int], list[int]]]:
    """lm-eval's ``(context_enc, continuation_enc)`` of each pair, by its own code."""
    model: Any = SimpleNamespace(
        backend="causal", tok_encode=hflm_tok_encode(tokenizer), prefix_token_id=prefix
    )
    model._encode_pair = lambda context, continuation: TemplateLM._encode_pair(
        model, context, continuation
    )
    model._loglikelihood_tokens = lambda requests, disable_tqdm=False: requests
    instances = [SimpleNamespace(args=pair) for pair in pairs]
    done = TemplateLM.loglikelihood(model, instances, disable_tqdm=True)
    return [(context, continuation) for _, context, continuation in done]


def hellaswag_pairs() -> list[tuple[str, str]]:
    """Real HellaSwag requests (one per choice), and the whitespace cases lm-eval moves."""
    pairs = [(s.context, " " + c) for s in load_hellaswag(bundled=True)[:40] for c in s.choices]
    return [
        *pairs,
        ("Question: Which one?\nAnswer: ", "A"),  # the trailing space moves
        ("Question: Which one?\nAnswer:\n \t", "B"),  # every trailing space does
        ("Ein Satz über Bäume:", " ä"),
        ("", "A whole continuation"),  # no context: the prefix token is the context
        ("<s>Already has a BOS", " then"),
    ]


@pytest.mark.parametrize("kind", ["tokenizers", "transformers"])
def test_tokens_are_lm_evals_for_real_requests(bpe: Any, kind: str) -> None:
    tokenizer = bpe if kind == "tokenizers" else WithBos(bpe)
    pairs = hellaswag_pairs()
    ours = tokenize_requests(pairs, tokenizer, prefix_token_id=1)
    assert [(r.context_tokens, r.continuation_tokens) for r in ours] == lm_eval_pairs(
        tokenizer, pairs
    )
    if kind == "transformers":  # BOS at the start of every context, never twice
        assert all(r.context_tokens[0] == 1 for r in ours)
        assert ours[-1].context_tokens[:2] != [1, 1]
        assert ours[-2].context_tokens == [1]  # the empty context is the BOS (prefix) token
    moved = ours[-5]  # "Answer: " + "A": the space is scored with the A, as one token here
    assert (moved.context, moved.continuation) == ("Question: Which one?\nAnswer: ", "A")
    assert moved.continuation_tokens == bpe.encode(" A").ids


def test_a_plain_callable_is_a_tokenizer(bpe: Any) -> None:
    def encode(text: str) -> list[int]:
        return list(bpe.encode(text).ids)

    pairs = hellaswag_pairs()[:-2]
    ours = tokenize_requests(pairs, encode)
    assert [(r.context_tokens, r.continuation_tokens) for r in ours] == lm_eval_pairs(bpe, pairs)


@dataclass
class Request:
    """What ``render_requests`` gives: an object with the two texts and its ids."""

    context: str
    continuation: str
    doc_id: int
    idx: int


def test_the_three_kinds_of_request_give_the_same_tokens_and_keep_their_ids(bpe: Any) -> None:
    line = {
        "request_type": "loglikelihood",
        "doc": {"query": "..."},
        "request": {"context": "The cat sat on the", "continuation": " mat"},
        "idx": 2,
        "task_name": "hellaswag",
        "doc_id": 7,
        "native_id": 7,
        "label": 2,
    }
    kinds = [line, ("The cat sat on the", " mat"), Request("The cat sat on the", " mat", 7, 2)]
    got = tokenize_requests(kinds, bpe)
    assert len({(tuple(r.context_tokens), tuple(r.continuation_tokens)) for r in got}) == 1
    assert [(r.index, r.doc_id, r.idx) for r in got] == [(0, 7, 2), (1, None, None), (2, 7, 2)]


@pytest.mark.parametrize(
    ("request_", "error", "message"),
    [
        ({"doc": {}, "idx": 0}, ValueError, r"request 1: expected a request dump line"),
        (("only a context",), ValueError, r"request 1: expected a \(context, continuation\)"),
        (("ctx", 3), TypeError, r"request 1: continuation should be a str, got 3"),
        (42, TypeError, r"request 1: expected an object with \.context and \.continuation"),
        (("", "x"), ValueError, r"request 1 has an empty context.*give prefix_token_id"),
        (("ctx", ""), ValueError, r"request 1: the continuation '' gives no token"),
    ],
)
def test_a_bad_request_is_named(bpe: Any, request_: Any, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        tokenize_requests([("fine", " request"), request_], bpe)


def test_the_context_is_cut_on_the_left_to_max_length(bpe: Any) -> None:
    pairs = hellaswag_pairs()[:12]
    whole = tokenize_requests(pairs, bpe)
    cut = tokenize_requests(pairs, bpe, max_length=48)
    for full, short in zip(whole, cut, strict=True):
        tokens = full.context_tokens + full.continuation_tokens
        assert short.input_tokens == tokens[-49:][:-1]  # HFLM: [-(max_length + 1):][:-1]
        assert len(short.input_tokens) == min(48, len(tokens) - 1)
        assert full.input_tokens == tokens[:-1]
    assert any(len(r.input_tokens) > 48 for r in whole)  # some contexts were cut
    with pytest.raises(ValueError, match=r"request 0: the continuation is \d+ tokens, more than"):
        tokenize_requests([("Context", " a continuation of several tokens")], bpe, max_length=2)
    with pytest.raises(ValueError, match="max_length should be a positive int, got 0"):
        tokenize_requests(pairs, bpe, max_length=0)


@pytest.mark.parametrize("side", ["right", "left"])
def test_padding_and_masks(bpe: Any, side: Any) -> None:
    tokenized = tokenize_requests(hellaswag_pairs()[:10], bpe, max_length=40)
    batch = collate(tokenized, pad_id=5, padding_side=side, return_tensors="np")
    assert list(batch) == list(KEYS)
    width = max(len(r.input_tokens) for r in tokenized)
    assert batch["input_ids"].shape == (10, width)
    for row, request in enumerate(tokenized):
        mask = batch["attention_mask"][row].astype(bool)
        assert mask.sum() == len(request.input_tokens)
        assert batch["input_ids"][row][mask].tolist() == request.input_tokens
        assert (batch["input_ids"][row][~mask] == 5).all()
        assert mask[0 if side == "right" else -1]
        scored = batch["continuation_mask"][row].astype(bool)
        assert scored.sum() == len(request.continuation_tokens)
        assert (scored <= mask).all()  # only real tokens are scored
        assert batch["target_ids"][row][scored].tolist() == request.continuation_tokens
        assert (batch["target_ids"][row][~scored] == IGNORE_INDEX).all()
        # the position scoring the continuation's last token is the input's last token
        assert np.flatnonzero(scored)[-1] == np.flatnonzero(mask)[-1]
    assert batch["index"].tolist() == list(range(10))
    assert batch["doc_id"].tolist() == [-1] * 10


def test_batches_tokenize_pad_with_the_tokenizers_pad_and_order_by_length(bpe: Any) -> None:
    pairs = hellaswag_pairs()[:20]
    listed = list(batches(pairs, WithBos(bpe), batch_size=8))
    assert [len(b["input_ids"]) for b in listed] == [8, 8, 4]
    assert isinstance(listed[0]["input_ids"], list)
    assert [i for b in listed for i in b["index"]] == list(range(20))
    assert any(0 in row for row in listed[0]["input_ids"])  # WithBos's pad_token_id
    ordered = list(batches(pairs, bpe, batch_size=8, by_length=True, pad_id=3))
    lengths = [sum(row) for b in ordered for row in b["attention_mask"]]
    assert lengths == sorted(lengths, reverse=True)
    assert sorted(i for b in ordered for i in b["index"]) == list(range(20))
    with pytest.raises(ValueError, match="batch_size should be a positive int, got 0"):
        next(batches(pairs, bpe, batch_size=0))
    with pytest.raises(ValueError, match="padding_side should be 'right' or 'left'"):
        next(batches(pairs, bpe, padding_side="middle"))  # type: ignore[arg-type]


def test_scores_from_the_masks_are_lm_evals_loglikelihoods(bpe: Any) -> None:
    """A bigram "model" scored both ways: lm-eval's per-request slicing and the batch masks."""
    torch = pytest.importorskip("torch", reason="torch is the optional [torch] extra")
    seeded = torch.Generator().manual_seed(0)
    weights = torch.randn(bpe.get_vocab_size(), bpe.get_vocab_size(), generator=seeded)
    tokenized = tokenize_requests(hellaswag_pairs()[:12], bpe, max_length=50)
    assert any(len(r.context_tokens + r.continuation_tokens) > 51 for r in tokenized)
    want = []
    for request in tokenized:  # HFLM._loglikelihood_tokens, one request at a time
        inp = torch.tensor((request.context_tokens + request.continuation_tokens)[-(50 + 1) :][:-1])
        logits = torch.log_softmax(weights[inp], dim=-1)
        contlen, inplen = len(request.continuation_tokens), len(inp)
        picked = logits[inplen - contlen : inplen]
        cont = torch.tensor(request.continuation_tokens)
        want.append(float(picked.gather(1, cont[:, None]).sum()))
    for side in ("right", "left"):
        batch = collate(tokenized, padding_side=side, return_tensors="pt")
        assert batch["input_ids"].dtype == torch.int64
        logits = torch.log_softmax(weights[batch["input_ids"]], dim=-1)
        targets = batch["target_ids"].clamp(min=0)[..., None]
        got = (logits.gather(-1, targets)[..., 0] * batch["continuation_mask"]).sum(-1)
        assert np.allclose(got.tolist(), want, atol=1e-4)


def test_single_token_labels(bpe: Any) -> None:
    found = check_single_token_labels(bpe)
    assert list(found) == [" A", " B", " C", " D", " E"]
    assert len(set(found.values())) == 5
    assert found[" A"] == bpe.encode(" A").ids[0]
    with pytest.raises(ValueError, match=r"answer label ' Ω' is not one token.*alone it is \["):
        check_single_token_labels(bpe, (" A", " Ω"))

    def letters(text: str) -> list[int]:  # one token per character
        return [ord(ch) for ch in text]

    with pytest.raises(ValueError, match=r"label ' A' is not one token.*\[32, 65\]"):
        check_single_token_labels(letters)
    assert check_single_token_labels(letters, ("A", "B")) == {"A": 65, "B": 66}
    # after "Answer: " the context's space moves to the label, as lm-eval moves it: two tokens
    with pytest.raises(ValueError, match=r"label 'A' .*alone it is \[65\], after 'Answer: ' it"):
        check_single_token_labels(letters, ("A", "B"), context="Answer: ")


def test_a_tokenizer_of_no_known_kind_is_refused() -> None:
    with pytest.raises(TypeError, match=r"tokenizer should be a tokenizers\.Tokenizer"):
        tokenize_requests([("a", " b")], object())


def test_tokenized_requests_can_be_batched_again(bpe: Any) -> None:
    tokenized = tokenize_requests(hellaswag_pairs()[:5], bpe)
    assert all(isinstance(r, TokenizedRequest) for r in tokenized)
    again = next(batches(tokenized, batch_size=5, return_tensors="np"))
    assert again["input_ids"].shape[0] == 5
