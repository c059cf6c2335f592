"""``python -m trajopt.cli``, as the ``trajopt`` script."""

from trajopt.cli.main import main

if __name__ == "__main__":
    raise SystemExit(main())
