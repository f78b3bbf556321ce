"""``python -m skframe``: the command line."""

from skframe.cli import main

if __name__ == "__main__":
    main()
