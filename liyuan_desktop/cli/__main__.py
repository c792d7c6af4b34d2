"""``python -m liyuan_desktop.cli`` — same as the ``liyuan`` command."""

import sys

from . import main

sys.exit(main())
