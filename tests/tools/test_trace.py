"""cushreport.trace on a synthetic Nsight Systems export: the tables nsys writes (the columns
trace.py reads), three repeats of a 3-GPU operation, and the typical one picked and summed; and the
same repeats as the CSV of cush's tracer (tools/trace), which must give the same activities."""
import csv
import os
import sqlite3
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))

from cushreport import trace  # noqa: E402


def make_trace(path, repeats, kernel="combine"):
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INT, end INT, deviceId INT, streamId INT, bytes INT, "
               "copyKind INT, srcDeviceId INT, dstDeviceId INT)")
    db.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT, end INT, deviceId INT, streamId INT, shortName INT)")
    db.execute("CREATE TABLE StringIds (id INT, value TEXT)")
    db.execute("INSERT INTO StringIds VALUES (7, ?)", (kernel,))
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


def make_csv(path, repeats, kernel="combine", extra=()):
    """make_trace's scenario as libcush_trace.so writes it: the copies between GPUs are CUPTI's
    MEMCPY2 records (copy kind 10, source and destination device); `extra` rows are appended."""
    with open(path, "w", newline="") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(trace.CSV_COLUMNS)
        t = 0
        for length in repeats:
            out.writerow(["copy", t, t + 4000, 0, 13, 1000000, 0, 1, 10, ""])
            out.writerow(["copy", t + 4000, t + 4000 + length, 0, 13, 1000000, 0, 2, 10, ""])
            out.writerow(["copy", t + 2000, t + 6000, 1, 14, 500000, 1, 2, 10, ""])
            out.writerow(["kernel", t + 9000, t + 10000, 2, 15, 0, "", "", "", kernel])
            t += 100000
        for row in extra:
            out.writerow(row)


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

    def test_the_operations_bursts_outnumbered_by_set_up_ones_are_still_the_typical_ones(self):
        # Ten bursts of one 1 µs memset each (a program's set-up) before the three operations.
        setup = [trace.Activity(-10**7 + i * 10**5, -10**7 + i * 10**5 + 1000, 0, 1, "memset", 64) for i in range(10)]
        groups = trace.bursts(setup + self.activities, 20000)
        self.assertEqual(len(groups), 13)
        self.assertEqual([len(g) for g in trace.alike(groups)], [4, 4, 4])
        self.assertEqual(trace.span(trace.typical(groups)), 10000)
        self.assertEqual(trace.period_ns(groups), 100000)  # the operations start 100 µs apart
        text = trace.render(setup + self.activities, gap_us=20)
        self.assertIn("4 activities in 10.0 µs. Bursts like it start every 100.0 µs (median): the GPUs are idle 90.0 µs", text)
        self.assertIn("Bursts like it: 3, median 10.0 µs", text)

    def test_an_iterative_program_is_cut_into_steps_at_its_main_kernel(self):
        # Two devices, 5 steps of 150 µs: a 100 µs stencil, then two 5 µs ghost kernels (the
        # second overlapping the first by 2 µs) and a 10 µs copy to the other device.
        acts = []
        for d in (0, 1):
            for k in range(5):
                t = k * 150000 + d * 1000
                acts += [trace.Activity(t, t + 100000, d, 7, "kernel void stencil<float>(float*)"),
                         trace.Activity(t + 101000, t + 106000, d, 7, "kernel ghosts"),
                         trace.Activity(t + 104000, t + 109000, d, 8, "kernel ghosts"),
                         trace.Activity(t + 110000, t + 120000, d, 9, "copy PtoP", 2 << 20, d, 1 - d)]
        acts.sort(key=lambda a: (a.start, a.end))
        found = trace.steps(acts, "stencil")
        self.assertEqual(sorted(found), [0, 1])
        self.assertEqual(found[0], dict(step=150000, kernel=100000, between=50000, other_kernels=2,
                                        other_kernels_busy=8000, copies=1, copies_busy=10000, steps=4))
        text = trace.render_steps(acts, "stencil")
        self.assertIn("| 1 | 4 | 150.0 | 100.0 | 50.0 | 2 | 8.0 | 1 | 10.0 |", text)
        self.assertEqual(trace.render_steps(acts, "nothing"), "No kernel named like 'nothing' ran twice on a device.\n")

    def test_steps_start_only_at_the_long_launches_of_a_kernel_launched_several_times(self):
        # One device, 4 steps of 360 µs: the interior (340 µs), then two 4 µs boundary launches of
        # the same kernel; cut at every launch, a "step" would be a few µs.
        acts = []
        for k in range(4):
            t = k * 360000
            acts += [trace.Activity(t, t + 340000, 0, 7, "kernel esoteric_kernel<half>"),
                     trace.Activity(t + 341000, t + 345000, 0, 7, "kernel esoteric_kernel<half>"),
                     trace.Activity(t + 346000, t + 350000, 0, 7, "kernel esoteric_kernel<half>")]
        self.assertEqual(trace.steps(acts, "esoteric")[0]["steps"], 11)
        found = trace.steps(acts, "esoteric", min_ns=100000)[0]
        self.assertEqual(found, dict(step=360000, kernel=340000, between=20000, other_kernels=2,
                                     other_kernels_busy=8000, copies=0, copies_busy=0, steps=3))
        text = trace.render_steps(acts, "esoteric", min_us=100)
        self.assertIn("named like 'esoteric' lasting at least 100 µs", text)
        self.assertIn("| 0 | 3 | 360.0 | 340.0 | 20.0 | 2 | 8.0 | 0 | 0.0 |", text)
        self.assertIn("lasting at least 500 µs ran twice", trace.render_steps(acts, "esoteric", min_us=500))

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



class InTempDir(unittest.TestCase):
    """A test with a folder of its own for the files it writes."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def path(self, name):
        return os.path.join(self.dir.name, name)


class TraceCsv(InTempDir):
    """The tracer's CSV gives the activities that the nsys export of the same work gives."""

    # A kernel name as the tracer writes it: demangled, with commas and quotes (quoted in the CSV).
    KERNEL = 'void combine<int, 3>(float const*, char const*) [with S = "a,b"]'


    @staticmethod
    def rows(activities):
        return [(a.start, a.end, a.device, a.src, a.dst, a.bytes, a.name) for a in activities]

    def test_the_csv_gives_the_activities_of_the_sqlite_export(self):
        make_trace(self.path("t.sqlite"), [4000, 5000, 9000], self.KERNEL)
        make_csv(self.path("t.csv"), [4000, 5000, 9000], self.KERNEL)
        with open(self.path("t.csv")) as f:
            self.assertIn('"void combine<int, 3>(float const*, char const*) [with S = ""a,b""]"', f.read())
        from_sqlite, from_csv = trace.load(self.path("t.sqlite")), trace.load(self.path("t.csv"))
        self.assertEqual(len(from_csv), 12)
        self.assertEqual(self.rows(from_csv), self.rows(from_sqlite))
        self.assertEqual([a.stream for a in from_csv], [a.stream for a in from_sqlite])
        self.assertIn("kernel " + self.KERNEL, {a.name for a in from_csv})
        self.assertEqual(trace.render(from_csv), trace.render(from_sqlite))

    def test_a_csv_is_recognized_by_its_header_under_any_name(self):
        make_csv(self.path("t.trace"), [4000], extra=[["memset", 50000, 51000, 3, 16, 4096, "", "", "", ""]])
        activities = trace.load(self.path("t.trace"))
        self.assertEqual(len(activities), 5)
        memset = activities[-1]
        self.assertEqual((memset.name, memset.device, memset.bytes, memset.is_copy), ("memset", 3, 4096, False))

    def test_copies_to_and_from_the_host_have_the_running_device_at_both_ends(self):
        make_csv(self.path("t.csv"), [], extra=[["copy", 10, 20, 1, 7, 64, 1, 1, 1, ""],
                                                 ["copy", 30, 40, 2, 7, 64, "", "", 2, ""],
                                                 ["copy", 50, 60, 0, 7, 64, 0, 0, 77, ""]])
        self.assertEqual(self.rows(trace.load(self.path("t.csv"))),
                         [(10, 20, 1, 1, 1, 64, "copy HtoD"), (30, 40, 2, 2, 2, 64, "copy DtoH"),
                          (50, 60, 0, 0, 0, 64, "copy 77")])

    def test_runtime_calls_are_kept_apart_and_summed_per_operation(self):
        # Host calls (CUSH_TRACE_API=1): thread 9 issues each repeat's copies, 100 µs apart; a
        # call on thread 4 falls in the second repeat's window only.
        api = []
        for t in (0, 100000, 200000):
            api += [["api", t - 3000, t - 1000, "", 9, 0, "", "", "", "cudaMemcpyAsync_v3020"],
                    ["api", t - 1000, t + 500, "", 9, 0, "", "", "", "cudaMemcpyAsync_v3020"],
                    ["api", t + 500, t + 1500, "", 9, 0, "", "", "", "cudaEventRecord_v3020"]]
        api.append(["api", 150000, 160000, "", 4, 0, "", "", "", "cudaStreamSynchronize_v3020"])
        make_csv(self.path("t.csv"), [4000, 5000, 9000], extra=api)
        activities, calls = trace.load(self.path("t.csv")), trace.load_api(self.path("t.csv"))
        self.assertEqual(len(activities), 12)  # the GPUs' work only
        self.assertEqual(len(calls), 10)
        self.assertEqual((calls[0].name, calls[0].device, calls[0].stream), ("api cudaMemcpyAsync_v3020", None, 9))
        # The typical repeat is the second (at 100 µs): its window runs to the third's start.
        text = trace.render(activities, api=calls)
        self.assertIn("Host: 4 CUDA runtime calls in the 100.0 µs from this burst's start to the next one's, "
                      "14.5 µs inside them (10.0 µs on thread 4, the busiest):", text)
        self.assertIn("| cudaStreamSynchronize_v3020 | 1 | 10.0 |", text)
        # Those that began in the window: the third repeat's two copies (2 + 1.5 µs), not the second's.
        self.assertIn("| cudaMemcpyAsync_v3020 | 2 | 3.5 |", text)
        self.assertIn("| cudaEventRecord_v3020 | 1 | 1.0 |", text)
        self.assertNotIn("Host:", trace.render(activities))
        make_trace(self.path("t.sqlite"), [4000])
        self.assertEqual(trace.load_api(self.path("t.sqlite")), [])  # an nsys export: none here

    def test_a_header_only_csv_is_an_empty_trace(self):
        make_csv(self.path("t.csv"), [])
        self.assertEqual(trace.render(trace.load(self.path("t.csv"))), "No copy or kernel in the trace.\n")

    def test_a_malformed_csv_names_the_file_and_line(self):
        make_csv(self.path("t.csv"), [4000], extra=[["copy", "x", 20, 1, 7, 64, 1, 1, 1, ""]])
        with self.assertRaisesRegex(ValueError, r"t\.csv, line 6: invalid literal"):
            trace.load(self.path("t.csv"))
        with open(self.path("w.csv"), "w") as f:
            f.write("start,end\n1,2\n")
        with self.assertRaisesRegex(ValueError, "not a cush_trace CSV"):
            trace.load(self.path("w.csv"))
        make_csv(self.path("k.csv"), [], extra=[["launch", 1, 2, 0, 0, 0, "", "", "", ""]])
        with self.assertRaisesRegex(ValueError, "unknown kind 'launch'"):
            trace.load(self.path("k.csv"))


class TraceFiles(InTempDir):
    """The tracer's CSV gzipped (as scripts/gpu_check.sh keeps it) reads as the plain one; a
    missing file, or one that is neither a trace CSV nor an SQLite export, is an InputError naming
    it, and the command line says so in one line with a non-zero exit."""

    def test_a_gzipped_csv_gives_the_activities_and_calls_of_the_plain_one(self):
        import gzip
        import shutil
        api = [["api", 100, 900, "", 9, 0, "", "", "", "cudaMemcpyAsync_v3020"]]
        make_csv(self.path("t.csv"), [4000, 5000, 9000], extra=api)
        for name in ("t.csv.gz", "t.trace"):  # by its name, and by its content under any name
            with open(self.path("t.csv"), "rb") as src, gzip.open(self.path(name), "wb") as dst:
                shutil.copyfileobj(src, dst)
            self.assertEqual(trace.render(trace.load(self.path(name))), trace.render(trace.load(self.path("t.csv"))))
            self.assertEqual(len(trace.load_api(self.path(name))), 1)

    def test_missing_and_foreign_files_are_input_errors(self):
        from cushreport.gbench import InputError
        with self.assertRaisesRegex(InputError, r"nothing\.csv: no such file"):
            trace.load(self.path("nothing.csv"))
        with open(self.path("notes.txt"), "w") as f:
            f.write("not a trace\n")
        with self.assertRaisesRegex(InputError, "neither cush_trace's CSV"):
            trace.load(self.path("notes.txt"))

    def test_the_command_line_names_the_file_and_exits_non_zero(self):
        import subprocess
        with open(self.path("notes.txt"), "w") as f:
            f.write("not a trace\n")
        tools = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools")
        done = subprocess.run([sys.executable, "-m", "cushreport", "trace", self.path("notes.txt")], capture_output=True,
                              text=True, env=dict(os.environ, PYTHONPATH=tools))
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("notes.txt: neither cush_trace's CSV", done.stderr)
        self.assertNotIn("Traceback", done.stderr)


if __name__ == "__main__":
    unittest.main()
