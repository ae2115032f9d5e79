"""cushreport.gbench: the one Google Benchmark JSON loader (no NumPy needed)."""
import contextlib
import io
import json
import os
import tempfile
import unittest

import needs

from cushreport import gbench

CONTEXT = {"date": "2026-01-01T00:00:00+00:00", "gpu_count": "2", "gpus": "GPU A, GPU A"}


class Load(unittest.TestCase):
    def load(self, benchmarks, context=CONTEXT):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "run.json")
            with open(path, "w") as f:
                json.dump({"context": context, "benchmarks": benchmarks}, f)
            return gbench.load(path)

    def test_keeps_repetitions_in_milliseconds_and_drops_aggregates_and_errors(self):
        run = self.load([
            {"name": "a/1/manual_time", "run_type": "iteration", "real_time": 1500.0, "time_unit": "us", "GB/s": 3.0},
            {"name": "a/1/manual_time", "run_type": "iteration", "real_time": 2.0, "time_unit": "ms"},
            {"name": "a/1/manual_time_median", "run_type": "aggregate", "aggregate_name": "median",
             "real_time": 1.75, "time_unit": "ms"},
            {"name": "b/2", "run_type": "iteration", "real_time": 3e6, "time_unit": "ns"},
            {"name": "c/3", "real_time": 0.5, "time_unit": "s"},  # no run_type: an old file's iteration
            {"name": "d/4", "run_type": "iteration", "error_occurred": True, "error_message": "needs 2 GPUs",
             "real_time": 0.0, "time_unit": "ms"},
        ])
        self.assertEqual([(r.name, r.ms) for r in run.rows],
                         [("a/1/manual_time", 1.5), ("a/1/manual_time", 2.0), ("b/2", 3.0), ("c/3", 500.0)])
        self.assertEqual(run.rows[0].fields["GB/s"], 3.0)
        self.assertEqual(run.rows[0].parts, ["a", "1", "manual_time"])
        self.assertEqual(run.errors, ["d/4: needs 2 GPUs"])
        self.assertEqual(gbench.error_lines(run), ["- ERROR d/4: needs 2 GPUs"])
        self.assertEqual(run.context, CONTEXT)
        self.assertEqual(run.source, "run.json")

    def test_an_aggregates_only_file_keeps_each_median_and_says_so(self):
        agg = lambda name, kind, t: {"name": f"{name}_{kind}", "run_name": name, "run_type": "aggregate",
                                     "aggregate_name": kind, "real_time": t, "time_unit": "ms"}
        run = self.load([agg("a/1/manual_time", "mean", 2.0), agg("a/1/manual_time", "median", 1.9),
                         agg("a/1/manual_time", "stddev", 0.1), agg("b/2/manual_time", "median", 7.0),
                         agg("b/2/manual_time", "cv", 0.01)])
        self.assertEqual([(r.name, r.ms) for r in run.rows], [("a/1/manual_time", 1.9), ("b/2/manual_time", 7.0)])
        self.assertTrue(run.context["aggregates_only"])
        # With repetitions present the medians are not rows and the context says nothing.
        run = self.load([{"name": "a/1/manual_time", "run_type": "iteration", "real_time": 2.0, "time_unit": "ms"},
                         agg("a/1/manual_time", "median", 2.0)])
        self.assertEqual([r.name for r in run.rows], ["a/1/manual_time"])
        self.assertNotIn("aggregates_only", run.context)

    def test_default_time_unit_is_nanoseconds(self):
        self.assertEqual(self.load([{"name": "x", "real_time": 2e6}]).rows[0].ms, 2.0)

    def test_device_of_context(self):
        self.assertEqual(gbench.device_of(CONTEXT), "2 x GPU A")
        self.assertEqual(gbench.device_of({"gpus": "GPU B"}), "1 x GPU B")

    def test_committed_run(self):
        run = gbench.load(os.path.join(needs.DATA, "halo_2026-11-23.json"))
        self.assertEqual(len(run.rows), 150)  # 30 faces x 5 implementations, one repetition each
        self.assertEqual(run.errors, [])
        self.assertEqual(gbench.device_of(run.context), "2 x NVIDIA H200")


def written(benchmarks):
    """The text Google Benchmark writes: context first, then one entry per ended benchmark."""
    entries = ",\n".join("    {\n" + ",\n".join(f'      "{k}": {json.dumps(v)}' for k, v in b.items()) + "\n    }"
                         for b in benchmarks)
    return '{\n  "context": {\n    "date": "2026-01-01"\n  },\n  "benchmarks": [\n' + entries + "\n  ]\n}\n"


class CloseCut(unittest.TestCase):
    ROWS = [{"name": "a/1", "run_type": "iteration", "real_time": 1.0, "time_unit": "ms"},
            {"name": "a/2", "run_type": "iteration", "real_time": 2.0, "time_unit": "ms"}]

    def test_the_whole_text_is_the_file_json_reads(self):
        self.assertEqual(json.loads(written(self.ROWS))["benchmarks"], self.ROWS)

    def test_a_file_cut_after_an_entry_keeps_every_entry_and_says_it_was_cut(self):
        text = written(self.ROWS)
        cut = text[:text.rindex("\n  ]")]  # what a killed run leaves: no closing of the list
        closed, kept = gbench.close_cut(cut)
        data = json.loads(closed)
        self.assertEqual(kept, 2)
        self.assertEqual(data["benchmarks"], self.ROWS)
        self.assertIs(data["context"]["cut"], True)
        self.assertEqual(data["context"]["date"], "2026-01-01")

    def test_a_part_written_entry_is_dropped(self):
        text = written(self.ROWS)
        cut = text[:text.index('"real_time": 2.0')]  # stopped inside the second entry
        closed, kept = gbench.close_cut(cut)
        self.assertEqual(kept, 1)
        self.assertEqual(json.loads(closed)["benchmarks"], self.ROWS[:1])

    def test_the_command_closes_a_cut_file_in_place_and_leaves_the_others(self):
        from cushreport.__main__ import main
        text = written(self.ROWS)
        with tempfile.TemporaryDirectory() as d:
            cut, whole, empty = (os.path.join(d, name) for name in ("cut.json", "whole.json", "empty.json"))
            for path, content in ((cut, text[:text.rindex("\n  ]")]), (whole, text), (empty, '{"benchmarks": [')):
                with open(path, "w") as f:
                    f.write(content)
            with contextlib.redirect_stdout(io.StringIO()) as said:
                main(["close", whole, cut])
            self.assertIn("whole.json: whole, left as it is", said.getvalue())
            self.assertIn("cut.json: cut by a time limit; closed after its last whole entry (2 entries kept)", said.getvalue())
            self.assertEqual(gbench.load(cut).context["cut"], True)
            self.assertEqual(len(gbench.load(cut).rows), 2)
            with open(whole) as f:
                self.assertEqual(f.read(), text)  # untouched
            with self.assertRaisesRegex(SystemExit, "no benchmark ended"):
                main(["close", empty])
            with open(empty) as f:
                self.assertEqual(f.read(), '{"benchmarks": [')

    def test_nothing_to_keep_is_an_error(self):
        text = written(self.ROWS)
        with self.assertRaisesRegex(ValueError, "no benchmark ended"):
            gbench.close_cut(text[:text.index("{", text.index('"benchmarks"')) + 5])
        with self.assertRaisesRegex(ValueError, "not a Google Benchmark"):
            gbench.close_cut('{"context": {}}')


class BadInput(unittest.TestCase):
    """A missing, malformed or empty file is an error that names it, never a traceback or an
    empty table; a mistyped results folder is not created."""

    def run_main(self, args):
        from cushreport.__main__ import main
        with contextlib.redirect_stdout(io.StringIO()) as said:
            with self.assertRaises(SystemExit) as stop:
                main(args)
        return str(stop.exception.code), said.getvalue()

    def test_each_bad_file_is_named_with_what_is_wrong(self):
        with tempfile.TemporaryDirectory() as d:
            cases = {"missing.json": (None, "cannot read it"), "text.json": ("not json", "not JSON"),
                     "object.json": ("{}", "no \"benchmarks\" list"), "list.json": ("[1, 2]", "no \"benchmarks\" list"),
                     "empty.json": ('{"benchmarks": []}', "holds no benchmark rows"),
                     "nameless.json": ('{"benchmarks": [{"real_time": 1}]}', "without a name")}
            for name, (content, why) in cases.items():
                path = os.path.join(d, name)
                if content is not None:
                    with open(path, "w") as f:
                        f.write(content)
                for args in (["summarize", "halo", path], ["compare", "--before", path, "--after", path]):
                    message, printed = self.run_main(args)
                    self.assertIn(path, message, args)
                    self.assertIn(why, message, args)
                    self.assertEqual(printed, "", args)  # no table

    def test_a_mistyped_results_folder_is_an_error_and_not_created(self):
        with tempfile.TemporaryDirectory() as d:
            folder = os.path.join(d, "resluts")
            message, _ = self.run_main(["report", "--results", folder])
            self.assertIn("no such folder", message)
            self.assertFalse(os.path.exists(folder))


if __name__ == "__main__":
    unittest.main()
