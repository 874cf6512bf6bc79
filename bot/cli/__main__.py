"""`python -m bot.cli`: the `cardfit` command line."""
import sys

from bot.cli.main import main

sys.exit(main())
