"""Edge layer: the command line, its tools, batches and reports."""
