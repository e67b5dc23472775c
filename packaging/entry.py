"""The bundle's entry point: the installed package's CLI, imported absolutely.

PyInstaller runs its script as __main__ outside any package, so app/__main__.py (a relative
import) cannot be it.
"""

import sys

from mnemoscope.app.cli import main

sys.exit(main())
