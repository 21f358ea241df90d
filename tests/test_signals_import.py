"""A signal during pyarrow's lazy import of pandas is neither lost nor a traceback.

pyarrow imports pandas at its first conversion to numpy; a Ctrl-C or SIGTERM raised inside
that import could be swallowed (pandas' C extensions report it as an ImportError, which
pyarrow takes for "no pandas") or leave pandas half imported. The command imports it first,
with the signals held, once its SIGTERM handler is in place.
"""

import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow  # subprocesses: the full run, not the one-minute loop

CHECK = """
import importlib, os, signal, sys, time
main = importlib.import_module("sdvm_hf.cli.main")  # the module, not the function

def importing():  # a SIGTERM arriving in the middle of the import
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(0.2)
    print("import finished", flush=True)

main._import_pandas = importing if {interrupt} else main._import_pandas
try:
    with main._terminate_like_interrupt():
        print("pandas imported", "pandas" in sys.modules, flush=True)
        time.sleep(1)
        print("not reached" if {interrupt} else "body done", flush=True)
except main.Terminated:
    print("terminated after the import", flush=True)
"""


def _run(interrupt: bool) -> list[str]:
    code = CHECK.format(interrupt=interrupt)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_the_command_imports_pandas_before_its_work() -> None:
    assert _run(interrupt=False) == ["pandas imported True", "body done"]


def test_a_sigterm_during_that_import_waits_for_it_then_terminates() -> None:
    assert _run(interrupt=True) == ["import finished", "terminated after the import"]
