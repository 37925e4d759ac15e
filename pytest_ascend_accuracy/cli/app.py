"""``ascend-accuracy`` console script.

Subcommands are registered as ``Command`` values (a name, a help line, a function that adds
the arguments and a function that runs them and returns the exit status), so another module
can add one with ``add_command(Command(...))`` before ``main`` builds the parser.

Exit status: 0 passed, 1 accuracy failure, 2 bad input or usage (the message names the file
and the problem; no traceback).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence

# --threshold's, --metric's and --scale-tolerance's defaults are the plugin's, so the CLI and
# the plugin judge the same dumps alike
from ..core.check_defaults import DEFAULT_METRIC, DEFAULT_SCALE_TOLERANCE, DEFAULT_THRESHOLD
from ..errors import AscendAccuracyError, ConfigError

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2
#: a command whose output pipe closed (128 + SIGPIPE, what a shell reports when it kills one)
EXIT_BROKEN_PIPE = 141
PROG = "ascend-accuracy"
#: the --scale-tolerance value that turns the scale guard off
SCALE_OFF = "none"


@dataclass(frozen=True)
class Command:
    """One subcommand: ``configure(parser)`` adds its arguments, ``run(args) -> int``."""

    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


_COMMANDS: Dict[str, Command] = {}


def add_command(command: Command) -> Command:
    """Add (or replace) a subcommand."""
    _COMMANDS[command.name] = command
    return command


# --------------------------------------------------------------------------- shared options
def backend_options(p: argparse.ArgumentParser) -> None:
    """``--backend``, ``--device``, ``--soc-version``: the subcommands that convert and run."""
    from ..backends import BackendKind

    p.add_argument("--backend", choices=[BackendKind.EMULATOR.value, BackendKind.ASCEND.value],
                   default=BackendKind.EMULATOR.value)
    p.add_argument("--device", type=int, default=None,
                   help="Ascend device id (backend ascend; default 0)")
    p.add_argument("--soc-version", help="ATC --soc_version (backend ascend)")


def make_cli_backend(args: argparse.Namespace, cache, **emulator_options):
    """The backend ``backend_options`` chose, built as the plugin builds it (``make_backend``:
    the device id is translated through ``ASCEND_RT_VISIBLE_DEVICES`` the same way)."""
    from ..backends import BackendKind, make_backend

    kind = BackendKind(args.backend)
    if kind is BackendKind.ASCEND:
        if any(emulator_options.values()):
            raise ConfigError("--backend", "these options exist only in the emulator backend: "
                                           + ", ".join(k for k, v in emulator_options.items() if v))
        return make_backend(kind, cache, device_ids=(0 if args.device is None else args.device,),
                            soc_version=args.soc_version or None, device_option="--device")
    if args.device is not None:  # it changed nothing on the CPU emulator, without a word
        raise ConfigError("--device", "given with the emulator backend, where it changes "
                                      "nothing: it applies to --backend ascend only (the "
                                      "emulator runs on this machine's CPU)")
    # --soc-version: the chip whose cube kernels the emulator models (rounding.cube_fp32_kernels)
    return make_backend(kind, cache, soc_version=args.soc_version or None, **emulator_options)


def resolve_threshold(args: argparse.Namespace) -> float:
    """``--threshold``, or the cosine default when ``--metric`` is cosine; another metric
    without ``--threshold`` is refused (as the marker and the YAML suite refuse it), before any
    work. Sets ``args.threshold`` (and ``args.metric``, cosine when not given) and returns it."""
    if getattr(args, "metric", "") is None:
        args.metric = DEFAULT_METRIC
    if args.threshold is None:
        from ..compare.thresholds import Threshold
        from ..core.check_defaults import default_threshold_for

        try:  # a misspelled metric is named as such (diagnose's --metric has no choices)
            Threshold(DEFAULT_THRESHOLD, args.metric)
        except ConfigError as exc:
            raise ConfigError("--metric", exc.problem) from None
        args.threshold = default_threshold_for(args.metric, where="--metric",
                                               fix=": pass --threshold")
    return args.threshold


def scale_tolerance_arg(text: Optional[str], default: Optional[float] = DEFAULT_SCALE_TOLERANCE
                        ) -> Optional[float]:
    """``--scale-tolerance``: a factor > 1 (checked as the marker's ``scale_tolerance=``) or
    ``none`` (the guard off); ``default`` when not given (None)."""
    from ..compare.thresholds import check_scale_tolerance

    if text is None:
        return default
    if text.strip().lower() == SCALE_OFF:
        return None
    try:
        value = float(text)
        if value != 0:  # 0 is off for check_scale_tolerance; here only "none" is
            return check_scale_tolerance(value)
    except (ValueError, ConfigError):
        pass
    raise ConfigError("--scale-tolerance", f"expected a factor > 1 (e.g. 2: the L2 norm within "
                                           f"0.5-2x the golden's) or {SCALE_OFF} to turn the "
                                           f"guard off, got {text!r}")


def op_options(p: argparse.ArgumentParser) -> None:
    """``--per-op NAME=T`` and ``--ignore NAME`` (read with ``per_op_arg``): compare, judge and
    diagnose take them alike."""
    p.add_argument("--per-op", action="append", default=[], metavar="NAME=T",
                   help="threshold for one op name or glob (repeatable); NAME=METRIC:T judges "
                        "it by another metric (prob=max_abs:1.2e-07)")
    p.add_argument("--ignore", action="append", default=[], metavar="NAME",
                   help="op name or glob not judged (repeatable)")


def threshold_options(p: argparse.ArgumentParser,
                      scale_default: str = f"{DEFAULT_SCALE_TOLERANCE:g}") -> None:
    p.add_argument("--threshold", type=float, default=None,
                   help="threshold for --metric (default 0.95 for cosine; required for the others)")
    p.add_argument("--metric", default=None,  # (None: cosine, or judge's recorded metric)
                   choices=["cosine", "rel_l2", "max_abs", "mean_abs", "rmse", "max_rel",
                            "mean_rel", "acc_rel", "kl"],
                   help="metric judged (cosine: at least the threshold; others: at most)")
    op_options(p)
    p.add_argument("--scale-tolerance", metavar="T", default=None,
                   help="scale guard, as the plugin's scale_tolerance=: a tensor whose L2 norm is "
                        "not within 1/T-T times the golden's fails even when its cosine passes "
                        f"(default {scale_default}; {SCALE_OFF}: off)")
    p.add_argument("--csv", metavar="OUT", help="write the msaccucmp-compatible CSV")
    p.add_argument("--json", metavar="OUT", help="write the result as JSON (re-judgeable)")
    p.add_argument("--html", metavar="OUT", help="write a self-contained HTML report")


def per_op_arg(items: Sequence[str]) -> Dict[str, object]:
    """``--per-op NAME=T`` entries as ``{name: threshold}`` (T for --metric), and
    ``--per-op NAME=METRIC:T`` as ``{name: {metric: T}}``, judging that op by its own metric
    (``compare.thresholds.as_threshold``)."""
    out = {}
    for item in items:
        name, sep, value = item.rpartition("=")
        if not sep or not name:
            raise ConfigError("--per-op", f"expected NAME=THRESHOLD, got {item!r}")
        metric, colon, number = value.rpartition(":")
        try:
            out[name] = {metric: float(number)} if colon else float(value)
        except ValueError:
            raise ConfigError("--per-op", f"threshold of {name!r} is not a number: {value!r}") from None
        if colon:  # its own metric, checked here: the error names the option as given
            from ..compare.thresholds import as_threshold

            try:
                as_threshold(out[name])
            except ConfigError as exc:
                raise ConfigError(f"--per-op {item}", exc.problem) from None
    return out


def judge_and_report(result, args, golden=None, *, scale_tolerance=DEFAULT_SCALE_TOLERANCE,
                     recorded_ignore=(), recorded_per_op=None, note: str = "",
                     actual=None) -> int:
    """Judge, write the requested reports, print the block (and ``note`` after it). With the
    ``golden`` DumpSet the hint also looks at the failing ops' golden operands (fp16 range),
    with the ``actual`` one too at the values its ops read from the graph's inputs.
    ``recorded_ignore``, ``recorded_per_op``: entries of a saved policy (not checked against
    the rows)."""
    from ..report.csv_report import write_csv
    from ..report.failure_text import failure_text, summary_text
    from ..report.html_report import write_html
    from ..report.json_report import write_json

    from ..compare.thresholds import Policy
    from ..report.failure_text import default_hint

    per_op = per_op_arg(args.per_op)
    _check_never_compared(result, per_op, args.ignore)
    result.check_names(per_op, args.ignore, "--per-op/--ignore")
    if recorded_per_op:
        per_op = {**recorded_per_op, **per_op}
    verdict = result.judge(Policy.build(args.threshold, per_op, tuple(args.ignore) + tuple(
        recorded_ignore), args.metric, scale_tolerance))
    csv_path = write_csv(result, args.csv, verdict) if args.csv else None
    ranges, model = (), None
    if not verdict.passed and getattr(args, "golden", None):
        from ..golden.stored_record import recorded_model

        # the stored golden's model (where it records one, unchanged) tells the graph's edges:
        # the operands of a golden of outputs only, the ops computing a flipped index
        model = recorded_model(args.golden)
    if golden is not None and not verdict.passed:
        from .failing_ranges import failing_ranges

        ranges = failing_ranges(golden, verdict, result, model)
    hint = None
    if not verdict.passed:  # (the HTML report shows it too)
        from .integer_hint import integer_hint
        from .selection_hint import selection_hint

        def plain() -> str:
            return (integer_hint(verdict, ranges, result, golden, model)
                    or default_hint(verdict, ranges, result, cli=True, golden=golden,
                                    model=model))

        # after TopKs that reordered near ties: the ignore flags that judge the rest (T2)
        from .other_inputs import other_inputs_hint, other_values_hint

        from ..report.cli_commands import with_inputs_note

        named = (result.meta.get("diagnose") or {}).get("model_name")  # a cache entry's
        golden_dir = getattr(args, "golden", None)
        hint = with_inputs_note(other_inputs_hint(result, golden, golden_dir)
                                or (actual is not None
                                    and other_values_hint(actual, golden, golden_dir))
                                or selection_hint(verdict, ranges, result, golden, model, plain)
                                or plain(), named)
    if args.json:
        write_json(result, args.json, verdict)
    if args.html:
        write_html(result, args.html, verdict, hint=hint)
    text = (summary_text(result, verdict, csv_path=csv_path) if verdict.passed
            else failure_text(result, verdict, csv_path=csv_path, report_how="pass --csv OUT",
                              hint=hint, cli=True))
    print(text)
    if note:
        print(note)
    return EXIT_OK if verdict.passed else EXIT_FAILED


def _check_never_compared(result, per_op, ignore) -> None:
    """A --per-op or --ignore entry naming only golden ops never compared (folded at conversion,
    or unmatched) is refused as the plugin refuses it, saying why; "is not an op of the dumps"
    said of an op the golden holds misled."""
    for what, entry in result.uncompared_entries(per_op, ignore):
        if result.coverage.never_compared(entry)[0]:
            option = "--per-op" if what == "per_op entry" else "--ignore"
            raise ConfigError(option, result.coverage.judges_nothing(what, entry, cli=True))


# --------------------------------------------------------------------------- progress
class ProgressLine:
    """A single updating stderr line (``\\r``), drawn at most every ``interval`` seconds and
    only after ``delay`` seconds, so short comparisons print nothing."""

    def __init__(self, stream, *, delay: float = 1.0, interval: float = 0.2):
        from ..compare.progress_line import ProgressThrottle

        self.stream = stream
        self.throttle = ProgressThrottle(delay, interval)
        self.drawn = False

    def __call__(self, p) -> None:
        from ..compare.progress_line import compare_progress_text

        if not self.throttle.ready(p.done == p.total):
            return
        line = compare_progress_text(p, self.throttle.elapsed)
        self.stream.write("\r" + line.ljust(100)[:100])
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()


# --------------------------------------------------------------------------- compare
def _configure_compare(p: argparse.ArgumentParser) -> None:
    p.add_argument("actual", help="actual dump: Ascend dump tree, leaf dir, file or npy dir")
    p.add_argument("golden", help="golden dump (npy dir of ONNX outputs, or any dump)")
    threshold_options(p)
    p.add_argument("--om-json", metavar="F", help="atc --mode=1 JSON of the actual model "
                   "(fused-op original names, op order)")
    p.add_argument("--model-name", help="model name to pick in a dump tree with several")
    p.add_argument("--mapping", metavar="F", help="JSON object {actual op: golden op}")
    p.add_argument("--inputs", action="store_true",
                   help="also compare op inputs: each with the golden output feeding it (from "
                        "--om-json), else with the golden's own op inputs (input_*.npy)")
    p.add_argument("--no-kl", action="store_true", help="skip the KL divergence (faster)")
    p.add_argument("--workers", type=_positive_int, default=None, metavar="N",
                   help="processes comparing tensor pairs (default: every core for a compare "
                        "of 64 MB or more, on Linux)")
    p.add_argument("--progress", action="store_true",
                   help="always draw the progress line (default: only on a terminal)")


def _positive_int(text: str) -> int:
    """argparse type of a count of 1 or more (``--workers 0`` and ``-3`` were taken as 1)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected 1 or more, got {value}")
    return value


def _inputs_note(result, actual, om_json) -> str:
    """What ``--inputs`` found nothing to compare for: said, not silently skipped (a golden
    of op outputs only, the plugin's stored default, gave no input row without a word)."""
    if any(r.slot.startswith("input") and r.compared for r in result.rows):
        return ""
    head = "--inputs: no op input was compared: "
    paired = [r for r in result.rows if r.slot.startswith("input") and "no_golden" not in r.flags]
    if paired:  # a golden tensor was found, the pair was not comparable (a trial: an input
        # in an unconverted layout was said to have "no golden tensor")
        return head + (f"{len(paired)} paired with a golden tensor could not be compared "
                       f"(first: {paired[0].label}: {paired[0].reason})")
    if not any(op.inputs for op in actual.ops):
        return head + ("the actual dump holds no op inputs (dumped in output mode; dump_mode "
                       "all or input writes them)")
    if not om_json:
        return head + ("no golden tensor for them: pass the actual model's om json (--om-json F) "
                       "to pair each input with the golden output feeding it, as msaccucmp "
                       "does, or a golden that holds op inputs (input_*.npy)")
    return head + ("neither the om json's producers nor the golden's op inputs (input_*.npy) "
                   "give them a golden tensor")


def _read_mapping(path: str) -> Dict[str, str]:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except OSError as exc:
        raise ConfigError(path, f"cannot read mapping: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ConfigError(path, f"mapping is not valid JSON: {exc}") from None
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                             for k, v in data.items()):
        raise ConfigError(path, "mapping must be a JSON object of op name strings")
    return data


def _run_compare(args: argparse.Namespace) -> int:
    from ..compare.engine import compare_dumps
    from ..compare.golden_spelling import in_actual_spelling
    from ..dump.loader import load_dump
    from ..golden.stored_record import recorded_model
    from ..golden.stored_topk_inputs import with_topk_inputs
    from .folded_ops import with_stored_model_names
    from .other_inputs import check_same_inputs

    resolve_threshold(args)
    scale_tolerance = scale_tolerance_arg(args.scale_tolerance)  # before any work
    mapping = _read_mapping(args.mapping) if args.mapping else None
    actual = load_dump(args.actual, om_json=args.om_json, model_name=args.model_name)
    # a stored golden of op outputs only: each TopK fed the values it ranks, which its
    # indices are judged against (near ties), as in the cache's golden
    golden = with_topk_inputs(load_dump(args.golden), recorded_model(args.golden))
    # the model's own op names where the golden's files spell them sanitized (p2o_Add_10): the
    # dump's headers or om json name them (p2o.Add.10), as the plugin shows them
    golden = in_actual_spelling(with_stored_model_names(golden, args.golden), actual)
    check_same_inputs(actual, golden, args.golden, args.om_json)  # (a golden of other inputs)
    if "folded_ops" not in actual.meta:  # as the plugin counts them: folded, not unmatched
        from .folded_ops import conversion_meta

        actual.meta.update(conversion_meta(args.om_json, args.golden))
    if mapping:
        from ..compare.matching import check_mapping

        check_mapping(mapping, actual, golden, where=args.mapping)
    progress = None
    if args.progress or sys.stderr.isatty():
        progress = ProgressLine(sys.stderr, delay=0.0 if args.progress else 1.0)
    try:
        result = compare_dumps(actual, golden, mapping=mapping, progress=progress,
                               compare_inputs=args.inputs, kl=not args.no_kl,
                               workers=args.workers)
    finally:
        if progress is not None:
            progress.close()
    from ..report.golden_overflow import golden_overflow_text, stand_in_text
    from .golden_source import diagnose_source

    # the model's own overflow, and a mask's -float32 max against the device's -inf: said as
    # assert_accuracy warns them, each a line of its own (no -W here)
    for warning in (golden_overflow_text(result, filter_advice=False),
                    stand_in_text(result, filter_advice=False)):
        if warning:
            print(f"{PROG}: warning: {warning}", file=sys.stderr)
    result.meta["diagnose"] = diagnose_source(args.golden)  # the model and inputs to diagnose
    note = _inputs_note(result, actual, args.om_json) if args.inputs else ""
    note = "\n".join(n for n in (note, stale_golden_note(result, args.golden)) if n)
    return judge_and_report(result, args, golden, scale_tolerance=scale_tolerance, note=note,
                            actual=actual)


def stale_golden_note(result, golden) -> str:
    """Why If ops went without a golden tensor when ``golden`` is a stored golden of an older
    golden format (``golden.stored_format``; empty otherwise)."""
    from ..golden.stored_format import stale_note

    if not golden:
        return ""
    return stale_note(golden, [(r.op_name, r.op_type) for r in result.rows if not r.golden_name])


add_command(Command("compare", "compare an actual dump with a golden dump", _configure_compare,
                    _run_compare))


# --------------------------------------------------------------------------- main
class _Parser(argparse.ArgumentParser):
    def error(self, message):  # usage errors: status 2, one line, no traceback
        self.print_usage(sys.stderr)
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


#: modules that register further subcommands (imported when the parser is built)
COMMAND_MODULES = ("judge", "diagnose", "dataset", "cache")


def build_parser() -> argparse.ArgumentParser:
    import importlib

    for module in COMMAND_MODULES:
        importlib.import_module(f"{__package__}.{module}")
    parser = _Parser(prog=PROG, description="Accuracy comparison of Ascend NPU dumps against "
                     "golden dumps (msaccucmp-compatible metrics and CSV).")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    # in the flow's order, others after by name: registration follows what was imported first
    order = ("compare",) + COMMAND_MODULES
    for cmd in sorted(_COMMANDS.values(), key=lambda c: (
            order.index(c.name) if c.name in order else len(order), c.name)):
        p = sub.add_parser(cmd.name, help=cmd.help, description=cmd.help)
        cmd.configure(p)
        p.set_defaults(_run=cmd.run)
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    """Run the console script; returns the exit status. Its output escapes text from
    undecodable bytes (a model path m\\udcff printed to a strict stream ended the run with
    UnicodeEncodeError, a review); the streams are given back as they were (main() called in a
    process of its own kept them changed, a review)."""
    streams = [s for s in (sys.stdout, sys.stderr) if hasattr(s, "reconfigure")]
    before = [s.errors for s in streams]
    for stream in streams:
        stream.reconfigure(errors="backslashreplace")
    try:
        return _main(argv)
    finally:
        for stream, errors in zip(streams, before):
            try:
                stream.reconfigure(errors=errors)
            except (ValueError, OSError):  # a stream closed meanwhile
                pass


def _main(argv: Optional[List[str]]) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code) if isinstance(exc.code, int) else EXIT_BAD_INPUT
    try:
        from ..core.compiled_modules import check_switches
        from ..core.env_names import check_env_names

        check_env_names()
        check_switches()  # read only for big enough tensors: a bad value said up front
        return int(args._run(args))
    except BrokenPipeError:
        # the reader went away (`| head`): no "error: Broken pipe" line, the status a shell
        # gives a command SIGPIPE ended (Python's own advice: stdout to devnull, so the exit's
        # flush cannot raise again)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except AscendAccuracyError as exc:  # in the command line's spelling where it has its own
        print(f"{PROG}: error: {getattr(exc, 'cli_text', None) or exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as exc:
        where = exc.filename if exc.filename else ""
        print(f"{PROG}: error: {where}{': ' if where else ''}{exc.strerror or exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
