"""cushreport table on synthetic bench_device_ops JSON: the fastest forced transport per size,
the copy engines kept unless beaten by more than the margin, sizes converted to the bytes one
device receives, and text that cush::TransportTable parses (one step per line)."""
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

from needs import REPORT

if not REPORT:
    from cushreport import gbench, table

CONTEXT = {"date": "2026-01-01T00:00:00+00:00", "gpu_count": "4", "gpus": "GPU A, GPU A, GPU A, GPU A"}
SIZES = (("4KiB", 4096), ("64KiB", 65536), ("1MiB", 1 << 20), ("16MiB", 1 << 24))
STEP = re.compile(r"^(copy|broadcast|scatter|gather|all_gather|all_to_all|reduce|all_reduce) \d+ "
                  r"(peer|nccl|host_staging|peer_kernel)(  # .*)?$")


def row(op, impl, label, us, gpus=4):
    return {"name": f"dev/{op}/{impl}/{label}/min_time:0.050/manual_time", "run_type": "iteration",
            "real_time": 1.0, "time_unit": "ms", "op_us": us, "gpus": float(gpus)}


def synthetic(gpus=4):
    """all_to_all: the peer kernel 2x faster up to 1 MiB, the copy engines 2% slower than NCCL at
    16 MiB (within the margin); all_reduce: NCCL fastest, then the copy engines from 16 MiB."""
    out = []
    for label, _ in SIZES:
        small = label != "16MiB"
        for impl, us in (("cush_peer", 20.0), ("cush_kernel", 10.0 if small else 30.0), ("cush_nccl", 19.6)):
            out += [row("all_to_all", impl, label, us, gpus) for _ in range(3)]
        for impl, us in (("cush_peer", 30.0 if small else 50.0), ("cush_nccl", 20.0 if small else 60.0)):
            out += [row("all_reduce", impl, label, us, gpus) for _ in range(3)]
        out += [row("all_reduce", "raw_nccl", label, 1.0, gpus)]  # not a forced transport: ignored
    return out


@unittest.skipIf(REPORT, REPORT)
class Table(unittest.TestCase):
    def load(self, benchmarks, name="ops.json"):
        d = tempfile.mkdtemp()
        path = os.path.join(d, name)
        with open(path, "w") as f:
            json.dump({"context": CONTEXT, "benchmarks": benchmarks}, f)
        return gbench.load(path)

    def steps(self, text):
        return [l.split("  #")[0] for l in text.splitlines() if not l.startswith("#")]

    def test_the_fastest_transport_per_size_in_message_bytes(self):
        text = table.propose([self.load(synthetic())])
        self.assertEqual(self.steps(text), [
            "all_to_all 0 peer_kernel",
            "all_to_all 12582912 peer",  # 16 MiB x 3/4: the bytes one of 4 devices receives
            "all_reduce 0 nccl",
            "all_reduce 16777216 peer"])
        for line in text.splitlines():
            if not line.startswith("#"):
                self.assertRegex(line, STEP)
        self.assertIn("# all_to_all 16MiB: nccl 19.6, peer 20.0, peer_kernel 30.0", text)

    def test_a_wider_margin_keeps_the_copy_engines(self):
        text = table.propose([self.load(synthetic())], margin=1.5)
        self.assertEqual(self.steps(text)[:1], ["all_to_all 0 peer"])

    def test_message_sizes_per_operation(self):
        self.assertEqual(table.message_bytes("all_gather", 4 << 20, 4), 3 << 20)
        self.assertEqual(table.message_bytes("scatter", 4 << 20, 4), 1 << 20)
        self.assertEqual(table.message_bytes("broadcast", 4 << 20, 4), 4 << 20)

    def test_files_of_several_gpu_counts_are_refused(self):
        runs = [self.load(synthetic(4), "a.json"), self.load(synthetic(2), "b.json")]
        with self.assertRaisesRegex(ValueError, "one GPU count"):
            table.propose(runs)
        tools = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools")
        done = subprocess.run([sys.executable, "-m", "cushreport", "table", runs[0].path, runs[1].path],
                              capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=tools))
        self.assertEqual(done.returncode, 1)
        self.assertIn("cushreport table: give the files of one GPU count", done.stderr)


if __name__ == "__main__":
    unittest.main()
