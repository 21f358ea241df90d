"""Any preset end to end: load, convert, write Parquet + wire JSON Lines, summarise; optionally
audit, fix or refine with SDVM. The first argument names the preset (see ``sdvm_hf.PRESETS``).

    python recipes/preset.py winogrande --split validation        # from the Hub
    python recipes/preset.py arc --data-files ARC-Challenge/test-*.parquet --split test
    SDVM_API_KEY=... python recipes/preset.py swag --audit
"""

import sys

from _recipe import main

from sdvm_hf import PRESETS

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in PRESETS:
        sys.exit(f"usage: preset.py NAME [options]; NAME is one of {', '.join(PRESETS)}")
    sys.exit(main(sys.argv[1], sys.argv[2:]))
