"""A child process that gets Ctrl-C as it would in a terminal.

A test runner started as a background job (``cmd &`` without job control) inherits SIGINT ignored, and so would
every command it starts; the Ctrl-C tests then measure nothing. ``preexec_fn=sigint_as_in_a_terminal`` gives the
child SIGINT's default action back before it starts, so Python installs its usual KeyboardInterrupt handler.
"""

import signal


def sigint_as_in_a_terminal() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
