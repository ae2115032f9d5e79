"""cushreport.trace on a synthetic Nsight Systems export: the tables nsys writes (the columns
trace.py reads), three repeats of a 3-GPU operation, and the typical one picked and summed."""
import os
import sqlite3
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))

from cushreport import trace  # noqa: E402


def make_trace(path, repeats):
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INT, end INT, deviceId INT, streamId INT, bytes INT, "
               "copyKind INT, srcDeviceId INT, dstDeviceId INT)")
    db.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT, end INT, deviceId INT, streamId INT, shortName INT)")
    db.execute("CREATE TABLE StringIds (id INT, value TEXT)")
    db.execute("INSERT INTO StringIds VALUES (7, 'combine')")
    t = 0
    for length in repeats:
        # Device 0 sends 1 MB to 1 and then to 2 on one stream; device 1 forwards to 2 meanwhile;
        # a kernel on device 2 at the end. `length` stretches the second copy.
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (?, ?, 0, 13, 1000000, 10, 0, 1)", (t, t + 4000))
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (?, ?, 0, 13, 1000000, 10, 0, 2)",
                   (t + 4000, t + 4000 + length))
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (?, ?, 1, 14, 500000, 10, 1, 2)", (t + 2000, t + 6000))
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, 2, 15, 7)", (t + 9000, t + 10000))
        t += 100000  # 90 µs idle between repeats
    db.commit()
    db.close()


class Trace(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "t.sqlite")
        make_trace(self.path, [4000, 5000, 9000])
        self.activities = trace.load(self.path)

    def tearDown(self):
        self.dir.cleanup()

    def test_load_reads_copies_with_their_devices_and_kernels_with_their_names(self):
        self.assertEqual(len(self.activities), 12)
        first = self.activities[0]
        self.assertEqual((first.start, first.src, first.dst, first.bytes, first.name), (0, 0, 1, 1000000, "copy PtoP"))
        self.assertIn("kernel combine", {a.name for a in self.activities})

    def test_bursts_split_at_idle_gaps_and_the_typical_one_has_the_median_length(self):
        groups = trace.bursts(self.activities, 20000)
        self.assertEqual([len(g) for g in groups], [4, 4, 4])
        self.assertEqual([trace.span(g) for g in groups], [10000, 10000, 13000])
        self.assertEqual(trace.span(trace.typical(groups)), 10000)
        self.assertEqual(len(trace.bursts(self.activities, 200000)), 1)  # a gap this long joins them

    def test_union_counts_overlapping_time_once(self):
        self.assertEqual(trace.union_ns([(0, 10), (5, 20), (30, 40)]), 30)
        self.assertEqual(trace.union_ns([]), 0)

    def test_render_lists_the_burst_and_sums_each_link_and_device(self):
        text = trace.render(self.activities, gap_us=20)
        self.assertIn("3 bursts of activity", text)
        self.assertIn("4 activities in 10.0 µs", text)
        self.assertIn("| 0.0 | 4.0 | copy PtoP 0 → 1 | 0 | 13 | 1.00 | 250.0 |", text)
        self.assertIn("| 9.0 | 1.0 | kernel combine | 2 | 15 |  |  |", text)
        # The typical burst is the second (spans 10, 10 and 13 µs): its copy 0 → 2 takes 5 µs.
        self.assertIn("| 4.0 | 5.0 | copy PtoP 0 → 2 | 0 | 13 | 1.00 | 200.0 |", text)
        self.assertIn("| 0 → 2 | 1 | 1.00 | 5.0 | 200.0 |", text)
        # Device 0 sends 2 MB in two copies one after the other: 9 µs of sending.
        self.assertIn("| 0 | 2.00 | 9.0 | 222.2 |", text)
        self.assertIn("| 1 | 0.50 | 4.0 | 125.0 |", text)
        self.assertIn("Bursts like it: 3, median 10.0 µs, from 10.0 to 13.0 µs.", text)

    def test_an_empty_trace_says_so(self):
        empty = os.path.join(self.dir.name, "e.sqlite")
        sqlite3.connect(empty).close()
        self.assertEqual(trace.render(trace.load(empty)), "No copy or kernel in the trace.\n")


if __name__ == "__main__":
    unittest.main()
