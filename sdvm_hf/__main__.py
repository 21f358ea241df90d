"""``python -m sdvm_hf``: the same as the ``sdvm-hf`` command."""

import sys

from sdvm_hf.cli import main

if __name__ == "__main__":
    sys.exit(main())
