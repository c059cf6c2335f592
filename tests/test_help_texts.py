"""Every command's --help: a complete description without reST markup, and help for every option."""

import argparse
import importlib

import pytest

from trajopt.edge.cli import BENCHMARK_GROUP, COMMANDS, PROBLEM_GROUP, registered
from trajopt.edge.cli.helptext import description

MODULES = sorted({module for module, _ in (*registered(PROBLEM_GROUP).values(), *registered(BENCHMARK_GROUP).values(),
                                           *COMMANDS.values())})


class _Parsed(Exception):
    pass


@pytest.mark.parametrize("module_name", MODULES)
def test_every_option_has_help_and_the_description_is_plain(module_name, monkeypatch):
    parsers = []

    def capture(self, args=None, namespace=None):
        parsers.append(self)
        raise _Parsed

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", capture)
    monkeypatch.setattr(argparse.ArgumentParser, "parse_known_args", capture)
    module = importlib.import_module(module_name)
    with pytest.raises(_Parsed):
        module.main([])
    parser = parsers[0]
    text = parser.description or ""
    assert text and "``" not in text and ":math:" not in text, text
    assert text.rstrip().endswith((".", ")")), f"{module_name}: description cut mid-sentence: {text!r}"
    missing = [action.option_strings or action.dest for action in parser._actions
               if not isinstance(action, argparse._HelpAction) and not action.help]
    assert not missing, f"{module_name}: options without help: {missing}"


def test_description_is_the_first_paragraph_without_markup():
    doc = "``trajopt run x``: the first\nparagraph, :math:`x` here.\n\nSecond paragraph."
    assert description(doc) == "trajopt run x: the first paragraph, x here."
