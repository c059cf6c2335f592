"""The ``trajopt`` command line: ``main`` dispatches to the tools, the registered problems and benchmarks, and
``regenerate-results``."""

from trajopt.edge.cli.main import BENCHMARK_GROUP, COMMANDS, PROBLEM_GROUP, main, registered

__all__ = ["BENCHMARK_GROUP", "COMMANDS", "PROBLEM_GROUP", "main", "registered"]
