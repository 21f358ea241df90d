"""The ``sdvm-hf`` parser and its one dispatch: each subcommand sets ``run`` to its handler."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from types import FrameType
from typing import TYPE_CHECKING, Any, NoReturn

from sdvm_hf._atomic import discard_unfinished, signals_held
from sdvm_hf.cli import _convert, _diff, _export, _files, _render, _report, _service
from sdvm_hf.cli._names import STAGES
from sdvm_hf.errors import SdvmHfError, printable

if TYPE_CHECKING:
    from sdvm_hf.service.roundtrip import Retry

USER_ERRORS: tuple[type[Exception], ...] = (SdvmHfError, OSError)
"""What the command reports in one line (exit 2) rather than as a traceback: this package's
own errors (:class:`~sdvm_hf.errors.SdvmHfError`, the service's ``ServiceError`` among them)
and the system's. Anything else is a bug and shows its traceback."""


class _Version(argparse.Action):
    """``--version``, read from the installed metadata only when asked (it is not free)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(
            option_strings, dest, nargs=0, help="show program's version number and exit"
        )

    def __call__(self, parser: argparse.ArgumentParser, *args: Any) -> NoReturn:
        from importlib.metadata import version

        print(f"{parser.prog} {version('sdvm-hf')}")  # on stdout, as argparse's own
        parser.exit()


def parser() -> argparse.ArgumentParser:
    """The ``sdvm-hf`` argument parser, every subcommand added."""
    root = argparse.ArgumentParser(
        prog="sdvm-hf",
        description="Hugging Face multiple-choice datasets as typed SDVM samples.",
        epilog="run 'sdvm-hf COMMAND --help' for each command's options and an example",
    )
    root.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    root.add_argument("--version", action=_Version)
    commands = root.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in (_convert, _files, _report, _diff, _service, _export, _render):
        group.add_commands(commands)
    return root


def main(argv: Sequence[str] | None = None, *, retry: Retry | None = None) -> int:
    """Run the command line; return the exit status.

    ``retry`` is the service stages' retry policy (tests pass a fast one; default: ``Retry()``).
    """
    root = parser()
    root.set_defaults(retry=retry)
    args = root.parse_args(argv)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_Printable("%(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO, handlers=[handler])
    try:
        with _terminate_like_interrupt(), _printable_stdout():
            return int(args.run(args))
    except Exception as error:
        if not isinstance(error, USER_ERRORS):
            raise
        print(f"sdvm-hf {args.command}: {printable(str(error), one_line=True)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as stop:
        discard_unfinished()  # one that landed before its writer was bound to a name
        hint = "rerun to resume" if args.command in STAGES else "no partial file was left"
        print(f"sdvm-hf {args.command}: {str(stop) or 'interrupted'}; {hint}", file=sys.stderr)
        return 143 if isinstance(stop, Terminated) else 130


class _Printable(logging.Formatter):
    """Log lines with control characters escaped (a check name or server text may hold them)."""

    def format(self, record: logging.LogRecord) -> str:
        return printable(super().format(record))


class _PrintableWriter:
    r"""A text stream that escapes control characters on their way to ``inner``.

    What a command prints comes from data, server text and check names: an escape sequence
    in them is shown (``\x1b[2J``), not obeyed by the terminal. Line breaks and tabs pass.
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def write(self, text: str) -> int:
        self.inner.write(printable(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@contextmanager
def _printable_stdout() -> Iterator[None]:
    inner = sys.stdout
    sys.stdout = _PrintableWriter(inner)
    try:
        yield
    finally:
        sys.stdout = inner


class Terminated(KeyboardInterrupt):
    """SIGTERM (``timeout``, ``docker stop``), raised where the command is, as Ctrl-C is."""


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated("terminated")


def _import_pandas() -> None:
    """Import pandas now, with the signals held, rather than at pyarrow's first conversion.

    pyarrow imports pandas lazily the first time it converts to numpy. A Ctrl-C or SIGTERM
    raised inside that import can be reported by pandas' C extensions as an ImportError,
    which pyarrow takes for "no pandas" (the signal is lost and the command goes on), or can
    leave pandas half imported (a traceback later). Most commands reach that conversion (pyarrow's
    Parquet reader imports pandas itself), so this moves the import rather than adding it; a
    CSV source alone would not need it (the conversion path makes its values without pandas).
    """
    with suppress(ImportError):  # pyarrow works without it
        import pandas  # type: ignore[import-untyped]  # noqa: F401


@contextmanager
def _terminate_like_interrupt() -> Iterator[None]:
    """Within this block, SIGTERM unwinds like Ctrl-C: no temporary file is left behind."""
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set a handler
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        with signals_held():  # a signal during it would break the import (see below)
            _import_pandas()
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)
