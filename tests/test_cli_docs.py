"""docs/cli.md names every option of every ``ascend-accuracy`` subcommand, and nothing else
(many were documented only in ``--help``, review helper)."""
import argparse
import re
from pathlib import Path

from pytest_ascend_accuracy.cli.app import build_parser

DOC = Path(__file__).resolve().parents[1] / "docs" / "cli.md"


def _sections():
    text = DOC.read_text()
    parts = re.split(r"^## `ascend-accuracy (\w+)`$", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


def _subcommands():
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices


def test_every_subcommand_and_option_is_documented_and_nothing_else():
    sections, commands = _sections(), _subcommands()
    assert sorted(sections) == sorted(commands)
    for name, parser in commands.items():
        options = {o for a in parser._actions for o in a.option_strings if o.startswith("--")}
        # the option list's entries ("  --labels FILE.json|FILE.npy", "  -h, --help"), not
        # options of other tools that a help text mentions ("atc --mode=1")
        documented = set(re.findall(r"^ {2}(?:-\w, )?(--[a-z][a-z0-9-]*)", sections[name], re.M))
        assert options - documented == set(), f"{name}: not in docs/cli.md"
        assert documented - options == set(), f"{name}: in docs/cli.md, not an option"
