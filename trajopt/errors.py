"""Errors trajopt raises for bad input: each message names the file, element and value."""


class TrajoptInputError(ValueError):
    """Bad user input (a file, a model element, a bound): the message says which and why."""


class MotionFileError(TrajoptInputError):
    """A motion or table file is malformed (names the file, line and problem)."""


class ModelFileError(TrajoptInputError):
    """A model file has an element trajopt cannot use (names the element and its path in the file)."""
