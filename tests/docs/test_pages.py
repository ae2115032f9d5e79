"""The documentation stays inside the repository and speaks to its users.

- Every relative link of README.md, docs/ (results included), the cases' and examples' pages and
  tools/ resolves to a file or folder inside the repository.
- No page names a path outside it (the team's own folders) or how a machine was obtained
  (machine-kind names such as nvidia-h200-x4, "lent").
- README.md and the design pages (docs/*.md) do not call something "in progress" (a shipped
  feature described as unfinished; the dated results pages are history and exempt).

Run from tests/docs (ctest's host.docs.pages does): python3 -m unittest -v test_pages
"""
import glob
import os
import re
import unittest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
LINK = re.compile(r"\]\(([^)\s]+)\)")
OUTSIDE = re.compile(r"\.\./shared/|/work/|ANCHORS\.md")
TEAM_WORDS = re.compile(r"nvidia-h[12]00(-x\d)?\b|\blent\b|\bthis session\b", re.I)


def pages():
    found = ["README.md"]
    for pattern in ("docs/**/*.md", "cases/*/README.md", "examples/*.md", "tools/**/*.md"):
        found += glob.glob(os.path.join(ROOT, pattern), recursive=True)
    return sorted({os.path.relpath(os.path.join(ROOT, p), ROOT) for p in found})


def read(page):
    with open(os.path.join(ROOT, page), encoding="utf-8") as f:
        return f.read()


class Pages(unittest.TestCase):
    def test_every_relative_link_resolves_inside_the_repository(self):
        dead = []
        for page in pages():
            for m in LINK.finditer(read(page)):
                target = m.group(1).split("#")[0]
                if not target or re.match(r"[a-z][a-z0-9+.-]*:", target):
                    continue  # an anchor on the same page, or a URL
                path = os.path.normpath(os.path.join(ROOT, os.path.dirname(page), target))
                if not path.startswith(ROOT + os.sep) or not os.path.exists(path):
                    dead.append(f"{page}: {m.group(1)}")
        self.assertEqual(dead, [], "links that do not resolve inside the repository")

    def test_no_page_names_a_path_outside_the_repository_or_the_teams_words(self):
        found = []
        for page in pages():
            for number, line in enumerate(read(page).splitlines(), 1):
                for pattern in (OUTSIDE, TEAM_WORDS):
                    if pattern.search(line):
                        found.append(f"{page}:{number}: {line.strip()[:120]}")
        self.assertEqual(found, [])

    def test_the_design_pages_cite_no_bare_issue_numbers(self):
        # The project's own issue numbers mean nothing to a user; a cited project's issue is named
        # with its project ("NCCL issue 265").
        pages_ = ["README.md"] + sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))
        pages_ += sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "cases", "*", "README.md")))
        bare = re.compile(r"(?<!NCCL )\bissues? \d+\b", re.I)
        found = [f"{page}:{n}: {line.strip()[:120]}" for page in pages_
                 for n, line in enumerate(read(page).splitlines(), 1) if bare.search(line)]
        self.assertEqual(found, [])

    def test_the_design_pages_call_nothing_in_progress(self):
        found = [f"{page}:{n}: {line.strip()[:120]}" for page in ["README.md"] + sorted(
            os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))
                 for n, line in enumerate(read(page).splitlines(), 1) if re.search(r"in progress", line, re.I)]
        self.assertEqual(found, [])


class Guide(unittest.TestCase):
    def test_the_architecture_names_every_public_header(self):
        text = read("docs/guide.md")
        section = text[text.index("## Architecture"):text.index("Data flows one way")]
        named = set(re.findall(r"`([a-z_]+\.(?:hpp|cuh))`", section))
        headers = {f for f in os.listdir(os.path.join(ROOT, "include", "cush")) if f.endswith((".hpp", ".cuh"))}
        self.assertEqual(sorted(headers - named), [], "public headers the guide's architecture does not name")
        self.assertEqual(sorted(named - headers - {"backend.hpp"}), [], "headers the guide names that do not exist")

    def test_cush_hpp_includes_every_public_header_but_the_cuda_and_mpi_ones(self):
        # transpose.cuh needs nvcc, process_group.hpp needs MPI's headers (cush::mpi).
        included = set(re.findall(r'#include "cush/([a-z_]+\.(?:hpp|cuh))"', read("include/cush/cush.hpp")))
        headers = {f for f in os.listdir(os.path.join(ROOT, "include", "cush")) if f.endswith((".hpp", ".cuh"))}
        self.assertEqual(sorted(headers - included - {"cush.hpp"}), ["process_group.hpp", "rank_field.hpp", "rank_plan.hpp", "transpose.cuh"])


if __name__ == "__main__":
    unittest.main()
