"""`draguard` entry point: the parser (each command adds its own: webhook/cli/<command>.py, with
`add_parser()` and `run()`), dispatch, the errors every command reports the same way, and the exit.
Exit codes are each command's (its module says them); 2 is a usage error everywhere.

The deadline of a run counts from the start of the process (its whole life: interpreter start-up,
reading, validation, allocation), or from the call when `main(argv)` is called in-process."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import NoReturn

from webhook import __version__
from webhook.cli import argtypes, audit, convert, explain, policytest, rules, simulate, strip, taint, validate
from webhook.cli.options import EXIT_OK, EXIT_USAGE, add_input_args, add_profile_args
from webhook.io.files import InputFileError, UnreadableInput
from webhook.model.errors import UsageError
from webhook.model.text import one_line


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse exits 2 too; keep its message short and clear
        self.print_usage(sys.stderr)
        sys.stderr.write(f"draguard: error: {message}\n")
        raise SystemExit(EXIT_USAGE)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="draguard",
        description="Validate Kubernetes DRA (resource.k8s.io/v1) objects as a "
        "v1.37 API server and scheduler would.",
    )
    parser.add_argument("--version", action="version", version=f"draguard {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    validate.add_parser(sub)
    simulate.add_parser(sub)
    explain.add_parser(sub)
    taint.add_parser(sub)
    audit.add_parser(sub)
    strip.add_parser(sub)
    policytest.add_parser(sub)
    convert.add_parser(sub, add_input_args, argtypes.seconds)
    from webhook.cli.serve import add_certs_parser, add_serve_parser

    # serve: the API server converts beta objects to v1 before calling the webhook (no --runtime-config)
    add_serve_parser(sub, lambda p: add_profile_args(p, runtime_config=False))
    add_certs_parser(sub)

    rules.add_parser(sub)
    return parser


STARTUP_SECONDS = 5.0  # a process older than this when main() starts is not a fresh `draguard` run


def _process_age() -> float:
    """Seconds since this process started (Linux `/proc/self/stat`), the interpreter's start-up; 0 (count
    from now) elsewhere, or when the process is older than STARTUP_SECONDS (main() called late in a
    long-lived process)."""
    try:
        with open("/proc/self/stat", "rb") as f:
            stat = f.read()
        started = int(stat[stat.rindex(b")") + 2 :].split()[19]) / os.sysconf("SC_CLK_TCK")
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - started
    except (OSError, ValueError, IndexError, AttributeError):
        return 0.0
    return age if 0.0 <= age <= STARTUP_SECONDS else 0.0


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command (`argv`, else the process's command line, which then ends with it)."""
    started = time.monotonic() - (_process_age() if argv is None else 0.0)
    if argv is None:
        _tune_collector()
    parser = build_parser()
    args = parser.parse_args(argv)
    args.started = started
    code = _dispatch(parser, args)
    if argv is None:
        _exit(code)
    return code


FULL_COLLECTION_EVERY = 100  # gen1 collections between two full ones considered (CPython's default: 10)


def _tune_collector() -> None:
    """Process setup of a command-line run (`main()` without argv; a test calling `main(argv)` in its own
    process never runs it): what is imported so far is frozen (it lives as long as the run), and a full
    collection is considered every 100th gen1 collection instead of every 10th, as `draguard serve` does
    (webhook/server/run.py). A run builds results it keeps to the end (a worker process's files, the main
    process's report of them): by CPython's default every full collection walks all of them again.
    Measured on `bench/validate_bench.py --slices 1125` (72,000 devices, 2 worker processes, gc.callbacks
    timing every collection, 2026-12-07): by default 5 full collections in the main process (0.27 s, run
    while both cores work for the workers) and 8 per worker (0.11 s each); with this setting 1 in the main
    process (0.004 s) and none in the workers. Cyclic garbage lives longer: a run's data is trees of dicts
    and lists, freed by reference counting."""
    import gc

    gc.freeze()
    gen0, gen1, _ = gc.get_threshold()
    gc.set_threshold(gen0, gen1, FULL_COLLECTION_EVERY)


def _exit(code: int) -> NoReturn:
    """End a command-line run once its output is written, without tearing down the heap: freeing a full
    compile cache takes up to a second on a busy machine, past the run's deadline. Nothing is left to do
    (worker pools are closed, output is flushed here)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can be written anyway
            pass
    os._exit(code)


def _dispatch(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    run: Callable[[argparse.Namespace], int] | None = getattr(
        args, "run", None
    )  # set by each command's parser
    if run is None:  # no command
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return run(args)
    except UsageError as e:
        sys.stderr.write(one_line(f"draguard: error: {e}") + "\n")
        return EXIT_USAGE
    except UnreadableInput as e:
        where = f"{e.path}: " if isinstance(e, InputFileError) and e.path else ""
        sys.stderr.write(one_line(f"draguard: error: {where}{e}") + "\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
