"""cushreport.summaries.overlap on synthetic JSON shaped like bench_overlap.cu's rows: medians over
the repetitions, one row per transport and size in a fixed order, failed rows listed."""
import json
import os
import tempfile
import unittest

from needs import REPORT

if not REPORT:
    from cushreport import gbench
    from cushreport.summaries import BY_NAME, overlap

CONTEXT = {"date": "2026-01-01T00:00:00+00:00", "gpu_count": "2", "gpus": "GPU A, GPU A"}


def rows(transport, mib, slowdown, link, reps=3):
    """`reps` repetitions; the middle one carries the given values, the others lie 10% either side."""
    out = []
    for r in (0.9, 1.0, 1.1)[:reps]:
        out.append({"name": f"overlap/{transport}/{mib}/min_time:0.500/manual_time", "run_type": "iteration",
                    "real_time": 20.0, "time_unit": "ms", "kernel_alone_ms": 1.0, "kernel_ms": slowdown * r,
                    "slowdown": slowdown * r, "transfer_alone_ms": 0.5, "transfer_ms": 0.6 * r,
                    "link_GBps": link * r, "rounds": 40.0})
    return out


@unittest.skipIf(REPORT, REPORT)
class Overlap(unittest.TestCase):
    def load(self, benchmarks):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "overlap_x.json")
            with open(path, "w") as f:
                json.dump({"context": CONTEXT, "benchmarks": benchmarks}, f)
            return gbench.load(path)

    def test_a_row_per_transport_and_size_with_medians(self):
        run = self.load(rows("nccl", 16, 1.30, 150.0) + rows("peer", 256, 1.12, 370.0) + rows("peer", 16, 1.05, 300.0)
                        + rows("peer_kernel", 16, 1.40, 200.0))
        text = overlap.render([run])
        lines = [l for l in text.splitlines() if l.startswith("| ") and not l.startswith("| transport")]
        self.assertEqual([l.split(" | ")[0] for l in lines],
                         ["| copy engines", "| peer kernel (SM stores)", "| NCCL send/receive", "| copy engines"])
        self.assertIn("| copy engines | 16 | 1.000 | 1.050 | 1.050 | 0.500 | 0.600 | 1.200 | 300.0 |", text)
        self.assertIn("| NCCL send/receive | 16 | 1.000 | 1.300 | 1.300 | 0.500 | 0.600 | 1.200 | 150.0 |", text)
        self.assertIs(BY_NAME["overlap"], overlap)

    def test_failed_rows_and_no_rows_are_said(self):
        run = self.load([{"name": "overlap/nccl/16/min_time:0.500/manual_time", "run_type": "iteration",
                          "error_occurred": True, "error_message": "skipped: two GPUs needed"}])
        text = overlap.render([run])
        self.assertIn("- ERROR", text)
        self.assertIn("No overlap/ rows in these files.", text)


if __name__ == "__main__":
    unittest.main()
