"""The summaries (cushreport.summaries) on the committed runs in docs/results: their tables must
be the ones committed there."""
import os
import unittest

from needs import REPORT, RESULTS

if not REPORT:
    from cushreport import gbench
    from cushreport.summaries import device_ops, halo, host_ops


def committed(name):
    with open(os.path.join(RESULTS, name)) as f:
        return f.read()


def table_rows(text):
    return [line for line in text.splitlines() if line.startswith("|")]


def section(text, start, end=None):
    """The text of a page from the line `start` up to the line `end`."""
    after = text.split(f"\n{start}\n", 1)[1]
    return after.split(f"\n{end}\n", 1)[0] if end else after


def load(*names):
    return [gbench.load(os.path.join(RESULTS, n)) for n in names]


@unittest.skipIf(REPORT, REPORT)
class CommittedTables(unittest.TestCase):
    def test_halo(self):
        page = section(committed("halo.md"), "## All rows")
        self.assertEqual(table_rows(halo.render(load("halo_2026-11-23.json"))), table_rows(page))

    def test_device_ops_runs_a_and_b(self):
        page = committed("device_ops.md")
        run_a = device_ops.render(load("device_ops_2026-11-23_small.json", "device_ops_2026-11-23_large.json"))
        self.assertEqual(table_rows(run_a), table_rows(section(page, "## Run A: every operation", "## Run B: small messages, three repetitions")))
        run_b = device_ops.render(load("device_ops_2026-11-23_reps.json"))
        self.assertEqual(table_rows(run_b), table_rows(section(page, "## Run B: small messages, three repetitions")))

    def test_host_ops(self):
        page = committed("host_ops.md").split("\n", 1)[1]  # after the provenance comment
        self.assertEqual(host_ops.render(load("host_ops.json")), page)



if __name__ == "__main__":
    unittest.main()
