"""Converters: the generic mapping, the preset type and the inverse half.

:mod:`.mapping` holds the mapping, :mod:`.preset` the preset type, :mod:`.inverse` the way
back (imported by the export only). This is the face the layers above use; the ``_private``
modules behind it are this package's own (``tests/test_layers.py`` holds every other package
to it).
"""

from sdvm_hf.convert._run import check_on_error

__all__ = ["check_on_error"]
