"""MMLU end to end, in any known layout: load, convert, write Parquet + wire JSON Lines,
summarise; optionally audit, fix or refine with SDVM.

    python recipes/mmlu.py                                    # the bundled test slice, offline
    python recipes/mmlu.py --from-hub --split validation
    python recipes/mmlu.py --data-files ../mmlu/data/test/*.csv   # the original CSV files
"""

import sys

from _recipe import main

if __name__ == "__main__":
    sys.exit(main("mmlu"))
