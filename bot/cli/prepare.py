"""`python -m bot.cli.prepare` (make install, the Dockerfile): the prepared copies of the bundled data.

Each bundled YAML file's parsed data, and each bundled catalog's validated data, kept in catalog/_compiled/
(catalog/bundled_yaml.py); the only writer of that directory. Without them every start reads the YAML.
"""
from __future__ import annotations

import shutil
import sys

from catalog import bundled_yaml
from catalog.bundled_yaml import bundled_files, load_bundled, write_copy
from catalog.loader import prepare_bundled_catalogs


def prepare() -> int:
    """The number of prepared copies in COMPILED_DIR afterwards (older copies removed)."""
    shutil.rmtree(bundled_yaml.COMPILED_DIR, ignore_errors=True)
    for path in bundled_files():
        raw = path.read_bytes()
        write_copy(raw, load_bundled(raw.decode("utf-8")))
    prepare_bundled_catalogs()
    return len(list(bundled_yaml.COMPILED_DIR.glob("*.pickle")))


if __name__ == "__main__":
    print(f"{prepare()} prepared copies of the bundled data in {bundled_yaml.COMPILED_DIR}", file=sys.stderr)
