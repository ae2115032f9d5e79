"""Every C++ snippet of the documentation is compiled code.

Each ```cpp block (also ```c++ and ```cuda) of README.md and docs/*.md (not docs/results, whose
pages are measurements) must be a contiguous run of lines of one source file under examples/,
tests/ or cases/, all of which the build compiles. Lines are compared with their leading and
trailing whitespace stripped, and blank lines are ignored on both sides, so a snippet may be
re-indented but not edited: change the source, then copy the lines. Fenced blocks must name their
language, so that C++ cannot escape the check as an untagged block; ```cmake, ```sh, ```text and
other languages are not checked.

Run from tests/docs (ctest's host.docs.snippets does): python3 -m unittest -v test_snippets
"""
import glob
import os
import re
import unittest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
CHECKED = {"cpp", "c++", "cuda"}
SOURCE_DIRS = ("examples", "tests", "cases")
SOURCE_EXTENSIONS = (".cpp", ".cu", ".hpp", ".cuh", ".h")
FENCE = re.compile(r"^\s*```(.*)$")


def pages():
    """The documentation pages whose snippets are checked, relative to the repository root."""
    found = ["README.md"] + sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))
    return [p for p in found if os.path.isfile(os.path.join(ROOT, p))]


def blocks(text):
    """(language, first line number, lines) of every fenced block of a Markdown text."""
    found, language, start, lines = [], None, 0, []
    for number, line in enumerate(text.splitlines(), 1):
        fence = FENCE.match(line)
        if language is None:
            if fence:
                language, start, lines = fence.group(1).strip().lower(), number, []
        elif fence and not fence.group(1).strip():
            found.append((language, start, lines))
            language = None
        else:
            lines.append(line)
    if language is not None:
        found.append((language, start, lines))  # unterminated: still checked
    return found


def significant(lines):
    """The lines as compared: stripped, blank ones left out."""
    return [s for s in (line.strip() for line in lines) if s]


def sources():
    """{path relative to the root: significant lines} of every source file under SOURCE_DIRS."""
    found = {}
    for folder in SOURCE_DIRS:
        for path in glob.glob(os.path.join(ROOT, folder, "**", "*"), recursive=True):
            if path.endswith(SOURCE_EXTENSIONS) and os.path.isfile(path):
                with open(path, encoding="utf-8", errors="replace") as f:
                    found[os.path.relpath(path, ROOT)] = significant(f.read().splitlines())
    return found


def longest_match(snippet, files):
    """(matched, file): the most leading lines of `snippet` found as one contiguous run of a file."""
    best, where = 0, None
    for path, lines in files.items():
        for start, line in enumerate(lines):
            if line != snippet[0]:
                continue
            n = 0
            while n < len(snippet) and start + n < len(lines) and lines[start + n] == snippet[n]:
                n += 1
            if n > best:
                best, where = n, path
            if best == len(snippet):
                return best, where
    return best, where


def problems(page, text, files):
    """What is wrong with the snippets of one page: one message per block at fault."""
    found = []
    for language, start, lines in blocks(text):
        if not language:
            found.append(f"{page}:{start}: a fenced block without a language (name it: ```cpp, ```sh, ```text ...)")
            continue
        if language not in CHECKED:
            continue
        snippet = significant(lines)
        if not snippet:
            found.append(f"{page}:{start}: an empty ```{language} block")
            continue
        matched, where = longest_match(snippet, files)
        if matched < len(snippet):
            near = f" (the lines before it match {where})" if where else ""
            found.append(f"{page}:{start}: the block starting '{snippet[0]}' is not compiled code: "
                         f"'{snippet[matched]}' is not found{near}")
    return found


class Snippets(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.files = sources()

    def test_every_cpp_block_is_a_run_of_lines_of_a_source(self):
        found, checked = [], 0
        for page in pages():
            with open(os.path.join(ROOT, page), encoding="utf-8") as f:
                text = f.read()
            checked += sum(1 for language, _, _ in blocks(text) if language in CHECKED)
            found += problems(page, text, self.files)
        self.assertGreater(checked, 0, "no ```cpp block found: is the page list right?")
        self.assertEqual(found, [], "\n" + "\n".join(found))

    def test_the_check_fails_on_an_edited_snippet(self):
        # The checker itself: a block taken from a source passes; the same block with one line
        # changed, or with an untagged fence, is reported with that line.
        path, lines = next((p, ls) for p, ls in sorted(self.files.items()) if len(ls) >= 3)
        good = "```cpp\n" + "\n".join("  " + line for line in lines[:3]) + "\n```\n"
        self.assertEqual(problems("page.md", good, self.files), [])
        bad = "```cpp\n" + lines[0] + "\n" + lines[1] + "  // edited\n" + lines[2] + "\n```\n"
        found = problems("page.md", bad, self.files)
        self.assertEqual(len(found), 1)
        self.assertIn("page.md:1:", found[0])
        self.assertIn("// edited", found[0])
        self.assertEqual(len(problems("page.md", "```\nint x;\n```\n", self.files)), 1)
        self.assertEqual(problems("page.md", "```sh\nnot C++\n```\n", self.files), [])


if __name__ == "__main__":
    unittest.main()
