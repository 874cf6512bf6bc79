"""The README and the docs say what the code does: every `cardfit` transcript and one-line example in them is
produced by the code as written, the README stays a page people read (at most 250 lines), every relative link
resolves, and no development history (issue numbers, stops, waves) stands where a reason should."""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
# Every page a reader reaches from the README; transcripts and links are checked in all of them.
PAGES = [README, *DOCS, ROOT / "benchmarks" / "README.md", ROOT / "research" / "README.md"]

# A transcript: inside a fenced block, a line "$ cardfit ..." and the lines after it up to the next "$ " or the
# block's end are what the command prints on stdout.
_FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.M | re.S)
# A one-line example: "- `cardfit ask "..."` → `first line of the answer`".
_EXAMPLE = re.compile(r"^\s*- `(cardfit [^`]+)` → `([^`]+)`", re.M)
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_HISTORY = re.compile(r"issue #|\bwaves?\b|\bstop\b|\bround \d|\bdefect \d|\bslice [a-z]-", re.I)


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def transcripts(path: Path) -> list[tuple[str, str]]:
    found = []
    for block in _FENCE.findall(path.read_text(encoding="utf-8")):
        command: str | None = None
        output: list[str] = []
        for line in block.splitlines():
            if line.startswith("$ "):
                if command is not None:
                    found.append((command, "\n".join(output)))
                command, output = (line[2:] if line.startswith("$ cardfit ") else None), []
            elif command is not None:
                output.append(line)
        if command is not None:
            found.append((command, "\n".join(output)))
    return found


def examples(path: Path) -> list[tuple[str, str]]:
    return _EXAMPLE.findall(path.read_text(encoding="utf-8"))


def run_cardfit(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`cardfit ARGS` as a user runs it, on the bundled default catalog, with the Hugging Face lookup off."""
    argv = shlex.split(command)
    assert argv[0] == "cardfit", command
    env = {key: value for key, value in os.environ.items() if not key.startswith("CARDFIT_")}
    env.update(CARDFIT_HF_LOOKUP="0", HF_HUB_OFFLINE="1", CARDFIT_DB=str(cwd / "cardfit.sqlite3"))
    return subprocess.run([sys.executable, "-m", "bot.cli", *argv[1:]], cwd=cwd, env=env, capture_output=True,
                          text=True, encoding="utf-8", timeout=120)


TRANSCRIPTS = [(page, command, output) for page in PAGES if page.exists() for command, output in transcripts(page)]
EXAMPLES = [(page, command, first) for page in PAGES if page.exists() for command, first in examples(page)]


def test_the_readme_shows_a_real_answer_and_five_examples():
    assert any(page == README for page, _, _ in TRANSCRIPTS)
    assert sum(page == README for page, _, _ in EXAMPLES) >= 5


@pytest.mark.parametrize(("page", "command", "output"), TRANSCRIPTS,
                         ids=[f"{_rel(page)}: {command}" for page, command, _ in TRANSCRIPTS])
def test_transcript_is_what_the_code_prints(page: Path, command: str, output: str, tmp_path: Path):
    result = run_cardfit(command, tmp_path)
    assert result.stdout.rstrip("\n") == output.rstrip("\n"), result.stderr


@pytest.mark.parametrize(("page", "command", "first"), EXAMPLES,
                         ids=[f"{_rel(page)}: {command}" for page, command, _ in EXAMPLES])
def test_example_answers_with_its_first_line(page: Path, command: str, first: str, tmp_path: Path):
    result = run_cardfit(command, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == first


def test_readme_is_at_most_250_lines():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 250


@pytest.mark.parametrize("page", [page for page in PAGES if page.exists()], ids=_rel)
def test_relative_links_resolve(page: Path):
    for target in _LINK.findall(page.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        assert (page.parent / target.split("#", 1)[0]).exists(), f"{_rel(page)} links to a missing {target}"


@pytest.mark.parametrize("page", [README, *DOCS], ids=_rel)
def test_no_development_history(page: Path):
    text = page.read_text(encoding="utf-8")
    found = [match.group(0) for match in _HISTORY.finditer(text)]
    assert not found, f"{_rel(page)}: {found}"


def test_the_architecture_page_ends_with_the_recipes():
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert "\n## Recipes\n" in text
