"""`python -m bot.cli.prepare` (make install): build the compiled copies of the bundled data now, not at first use.

Every copy is also built when a start finds it missing (catalog/bundled_yaml.py); this only moves that cost out
of the first `cardfit ask` after an install or an edit. It reads every bundled file the way a start does.
"""
from __future__ import annotations

import sys

from bot.texts.i18n import LANGUAGES, texts
from catalog.bundled_yaml import COMPILED_DIR, compile_files
from catalog.loader import BUNDLED, compile_bundled_catalogs, load_catalog
from engine.formats.table import default_table
from engine.parse import Vocabulary


def prepare() -> int:
    """The number of compiled copies in COMPILED_DIR afterwards."""
    compile_files()
    compile_bundled_catalogs()
    for name in BUNDLED:
        Vocabulary.of_catalog(load_catalog(name).catalog)  # the registry and the parser's index of its names
    default_table()
    for lang in LANGUAGES:
        texts(lang)
    return len(list(COMPILED_DIR.glob("*.pickle")))


if __name__ == "__main__":
    print(f"{prepare()} compiled copies of the bundled data in {COMPILED_DIR}", file=sys.stderr)
