"""``python -m trajopt`` runs the command line, as the ``trajopt`` script does."""

from trajopt.edge.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
