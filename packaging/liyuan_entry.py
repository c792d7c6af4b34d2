"""PyInstaller entry point of the built app: the same as the ``liyuan`` console script (no arguments open the
window; ``chat``, ``card`` … run the headless commands)."""

import sys

from liyuan_desktop.cli import main

if __name__ == "__main__":
    sys.exit(main())
