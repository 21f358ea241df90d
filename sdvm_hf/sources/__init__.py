"""Loaders: Hugging Face splits and local files to typed samples.

This is the face the layers above use; the ``_private`` modules behind it are this package's
own (``tests/test_layers.py`` holds every other package to it).
"""

from sdvm_hf.sources._split import parse_split

__all__ = ["parse_split"]
