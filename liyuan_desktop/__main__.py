"""``python -m liyuan_desktop`` — same as the ``liyuan`` command."""

import sys

from .cli import main

sys.exit(main())
