"""``python -m trajopt.edge.cli``, as the ``trajopt`` script."""

from trajopt.edge.cli.main import main

if __name__ == "__main__":
    raise SystemExit(main())
