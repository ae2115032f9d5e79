"""scripts/skip_reasons.py: every skipped test of a ctest log with its reason, whichever way the
test printed it (GoogleTest, Python's unittest, the examples' SKIPPED line), and the skipped
tests that printed none, by name."""
import contextlib
import io
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import skip_reasons  # noqa: E402

SKIP = "Skip regular expression found in output. Regex=[x]\n"
LOG = (
    "1/5 Testing: gpu.A\nOutput:\n/x/a.cpp:10: Skipped\nneeds 2 GPUs, this host has 0 (no driver)\n[  SKIPPED ] A\n"
    "<end of output>\n" + SKIP +
    "2/5 Testing: gpu.B\nOutput:\n/x/b.cpp:11: Skipped\nneeds 2 GPUs, this host has 0 (no driver)\n<end of output>\n" + SKIP +
    "3/5 Testing: host.tools.report\nOutput:\ntest_x ... skipped 'needs pmccabe (scripts/setup.sh installs them)'\n"
    "<end of output>\n" + SKIP +
    "4/5 Testing: example.device_ops\nOutput:\n  SKIPPED: no GPU (no driver)\n<end of output>\n" + SKIP +
    "5/5 Testing: gpu.Silent\nOutput:\nnothing said\n<end of output>\n" + SKIP +
    "6/6 Testing: host.Passed\nOutput:\nall good: Skipped nothing\n<end of output>\nTest Passed.\n")


class SkipReasons(unittest.TestCase):
    def test_each_kind_of_reason_and_the_silent_ones(self):
        found = dict(skip_reasons.skips(LOG))
        self.assertEqual(found, {"gpu.A": "needs 2 GPUs, this host has 0 (no driver)",
                                 "gpu.B": "needs 2 GPUs, this host has 0 (no driver)",
                                 "host.tools.report": "needs pmccabe (scripts/setup.sh installs them)",
                                 "example.device_ops": "no GPU (no driver)", "gpu.Silent": None})

    def test_the_summary_counts_every_skip(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "LastTest.log")
            with open(path, "w") as f:
                f.write(LOG)
            with contextlib.redirect_stdout(io.StringIO()) as said:
                self.assertEqual(skip_reasons.main(["skip_reasons.py", path]), 0)
        text = said.getvalue()
        self.assertIn("(5 tests; count, reason)", text)
        self.assertIn("    2 needs 2 GPUs, this host has 0 (no driver)", text)
        self.assertIn("    1 printed no reason: gpu.Silent", text)


if __name__ == "__main__":
    unittest.main()
