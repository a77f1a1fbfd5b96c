"""``python -m redline_push``: the same as the ``redline-push`` command."""

import sys

from redline_push.cli import main

sys.exit(main())
