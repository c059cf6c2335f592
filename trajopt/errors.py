"""Errors trajopt raises for bad input: each message names the file, element and value."""


def first_names(names, count: int = 6) -> str:
    """The first ``count`` of ``names`` joined by commas, and how many more: a long list kept to one line."""
    names = list(names)
    return ", ".join(names[:count]) + (f" (+{len(names) - count} more)" if len(names) > count else "")


class TrajoptInputError(ValueError):
    """Bad user input (a file, a model element, a bound): the message says which and why."""


class MotionFileError(TrajoptInputError):
    """A motion or table file is malformed (names the file, line and problem)."""


class ModelFileError(TrajoptInputError):
    """A model file has an element trajopt cannot use (names the element and its path in the file)."""
