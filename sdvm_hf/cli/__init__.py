"""The ``sdvm-hf`` command: a thin layer over :mod:`sdvm_hf.jobs` and :mod:`sdvm_hf.service`."""

from sdvm_hf.cli.main import main

__all__ = ["main"]
