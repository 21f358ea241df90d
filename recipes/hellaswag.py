"""HellaSwag end to end: load, convert, write Parquet + wire JSON Lines, summarise; optionally
audit, fix or refine with SDVM.

    python recipes/hellaswag.py                    # the bundled validation slice, offline
    python recipes/hellaswag.py --from-hub --split train
    SDVM_API_KEY=... python recipes/hellaswag.py --refine
"""

import sys

from _recipe import main

if __name__ == "__main__":
    sys.exit(main("hellaswag"))
