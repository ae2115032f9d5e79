"""The summaries (cushreport.summaries) on the committed runs in docs/results: their tables must
be the ones committed there, and their summary.json figures the ones the pages print."""
import os
import unittest

from needs import DATA, REPORT, RESULTS

if not REPORT:
    from cushreport import gbench
    from cushreport.summaries import device_ops, fft, halo, host_ops, temporal


def committed(name):
    with open(os.path.join(RESULTS, name)) as f:
        return f.read()


def table_rows(text):
    return [line for line in text.splitlines() if line.startswith("|")]


WAVE_FOUR_GPUS = "## The wave on four GPUs (4 × H200, NVLink between every pair), 1024³, overlapped"


def section(text, start, end=None):
    """The text of a page from the line `start` up to the line `end`."""
    after = text.split(f"\n{start}\n", 1)[1]
    return after.split(f"\n{end}\n", 1)[0] if end else after


def load(*names):
    return [gbench.load(os.path.join(DATA, n)) for n in names]


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

    def test_fft(self):
        runs = load("perf_cases_fft_1gpu.json", "fft_2e30_transposed_out_2026-11-24.json", "fft_e2e_parts_2026-11-24.json",
                    "fft_2vgpu_2026-11-24.json")
        self.assertEqual(table_rows(fft.render(runs)), table_rows(section(committed("fft.md"), "## All rows")))

    def test_temporal(self):
        page = section(committed("temporal.md"), "## All rows (`python3 -m cushreport summarize temporal`, tools/)",
                       "## The wave case: the streaming kernel")
        self.assertEqual(table_rows(temporal.render(load("temporal_2026-11-28_2xh200.json"))), table_rows(page))

    def test_temporal_four_gpus(self):
        page = section(committed("temporal.md"), "## Four GPUs (4 × H200, NVLink between every pair), 1024³, overlapped",
                       "## All rows (`python3 -m cushreport summarize temporal`, tools/)")
        rendered = table_rows(temporal.render(load("temporal_2026-11-28h_4xh200.json")))
        written, quoted = page.split("\nWave: copy", 1)
        self.assertEqual(rendered, table_rows(quoted))
        # The page's own table: the render's 4-GPU rows, E4 and cush / raw as the text states them.
        self.assertEqual([r.replace("**", "") for r in table_rows(written)[2:]], rendered[-4:])
        (e,) = [e for e in temporal.figures(load("temporal_2026-11-28h_4xh200.json")[0])
                if e["name"] == "advection.4gpu.best_steps_overlap.rate_n1024"]
        self.assertEqual((e["steps_per_launch"], e["value"], e["ratio"], e["efficiency"]), (2, 946.0, 1.001, 0.933))

    def test_temporal_wave(self):
        page = section(committed("temporal.md"), "## The wave case: the streaming kernel", WAVE_FOUR_GPUS)
        self.assertEqual(table_rows(temporal.render(load("wave_2026-11-28_2xh200.json"))), table_rows(page))

    def test_temporal_wave_four_gpus(self):
        page = section(committed("temporal.md"), WAVE_FOUR_GPUS, "## Not done yet")
        written, quoted = page.split("\nWave: copy", 1)
        (run,) = load("wave_2026-11-29zj_4xh200.json")
        self.assertEqual(table_rows(temporal.render([run])), table_rows(quoted))
        # The page's own table: each order's one-GPU ratio and 4-GPU row as the render states them.
        got = {(int(r[0]), int(r[1])): r[2:] for r in (row.replace("**", "").strip("|").split("|") for row in table_rows(written)[2:])}
        e = {x["name"]: x for x in temporal.figures(run)}
        for order in (2, 4, 6, 8):  # order 2's best T (4) has no raw row: its one-step row is stated
            f = e[f"wave.order{order}.4gpu.{'one_step' if order == 2 else 'best_steps'}_overlap.rate_n1024"]
            self.assertEqual(f["steps_per_launch"], 1)
            self.assertEqual([float(v) for v in got[(order, 1)][1:]], [f["reference"], f["value"], f["ratio"], f["efficiency"]])

    def test_wave_readme_two_gpus_after_the_dispatch(self):
        # cases/wave/README.md's table of run 170 (2 x H200): each order's row as temporal.figures states it.
        with open(os.path.join(RESULTS, "..", "..", "cases", "wave", "README.md")) as f:
            readme = f.read()
        table = readme.split("wave_2026-11-29zk_2xh200.json", 1)[1].split("\n\n", 2)[1]
        rows = {int(r[0]): r[1:] for r in (row.replace("**", "").replace("(", "|").replace(")", "").strip("|").split("|")
                                           for row in table_rows(table)[2:])}
        (run,) = load("wave_2026-11-29zk_2xh200.json")
        e = {x["name"]: x for x in temporal.figures(run)}
        self.assertEqual(sorted(rows), [2, 4, 6, 8])
        for order, cells in rows.items():
            two = e[f"wave.order{order}.2gpu.{'one_step' if order == 2 else 'best_steps'}_overlap.rate_n1024"]
            self.assertEqual(two["steps_per_launch"], 1)
            self.assertEqual([float(v) for v in cells[2:]], [two["reference"], two["value"], two["ratio"], two["efficiency"]])
            if order != 2:  # order 2's best T on one GPU is 4 (stated below the table)
                one = e[f"wave.order{order}.1gpu.best_steps.rate_n1024"]
                self.assertEqual([float(v) for v in cells[:2]], [one["value"], one["ratio"]])
        t4 = e["wave.order2.1gpu.best_steps.rate_n1024"]
        self.assertIn(f"{t4['value']} G updates/s on one GPU ({t4['ratio']} R1w)", readme)

    def test_temporal_figures_are_the_pages_figures(self):
        # summary.json's wave entries: the best T of the one-GPU table and that T's overlapped row.
        got = {e["name"]: e for e in temporal.figures(load("wave_2026-11-28_2xh200.json")[0])}
        page = section(committed("temporal.md"), "## The wave case: the streaming kernel")  # the 4-GPU run has such tables too
        one = section(page, "### Wave, order 2, one GPU, 1024^3 (single-GPU reference)",
                      "### Wave, order 2, 2 GPUs, 1024^3, overlapped")
        best = max((r.strip("|").split("|") for r in table_rows(one)[2:]), key=lambda r: float(r[1]))
        e = got["wave.order2.1gpu.best_steps.rate_n1024"]
        self.assertEqual((e["steps_per_launch"], e["value"], e["ratio"]), (int(best[0]), float(best[1]), float(best[2])))
        two = section(page, "### Wave, order 2, 2 GPUs, 1024^3, overlapped", "### Wave, order 4, one GPU, 1024^3 (single-GPU reference)")
        row = next(r.strip("|").split("|") for r in table_rows(two)[2:] if int(r.strip("|").split("|")[0]) == int(best[0]))
        e = got["wave.order2.2gpu.best_steps_overlap.rate_n1024"]
        self.assertEqual((e["reference"], e["value"], e["ratio"], e["efficiency"]), tuple(float(x) for x in row[1:5]))

    def test_host_ops(self):
        page = committed("host_ops.md").split("\n", 1)[1]  # after the provenance comment
        self.assertEqual(host_ops.render(load("host_ops.json")), page)


@unittest.skipIf(REPORT, REPORT)
class PageFigures(unittest.TestCase):
    """summary.json's figures of device_ops.md and halo.md, checked against numbers the pages print."""

    def by_name(self, entries):
        return {e["name"]: e for e in entries}

    def test_device_ops_goals(self):
        a = self.by_name(device_ops.figures("A", load("device_ops_2026-11-23_large.json")[0]))
        copy = a["device_ops.2gpu.run_a.copy.1GiB.cush_vs_raw_peer"]
        self.assertEqual((copy["value"], copy["reference"], copy["ratio"]), (2721.4, 2712.3, 0.997))
        self.assertEqual(a["device_ops.2gpu.run_a.copy.1GiB.cush_busbw"]["value"], 394.6)
        self.assertEqual(a["device_ops.2gpu.run_a.exchange.1GiB.cush_busbw"]["value"], 384.8)
        self.assertEqual(a["device_ops.2gpu.run_a.all_to_all.1GiB.cush_vs_raw_nccl"]["ratio"], 1.145)
        self.assertEqual([a[f"device_ops.2gpu.run_a.{op}.1GiB.cush_vs_best_raw"]["ratio"]
                          for op in ("broadcast", "scatter", "gather", "all_gather")], [0.995, 1.149, 0.993, 1.161])
        self.assertEqual(copy["source"], "device_ops_2026-11-23_large.json")
        self.assertEqual(copy["device"], "2 x NVIDIA H200")
        c = self.by_name(device_ops.figures("C", load("device_ops_2026-11-23_final_small.json")[0]))
        self.assertEqual([c[f"device_ops.2gpu.run_c.all_reduce.{s}.cush_vs_raw_nccl"]["ratio"] for s in device_ops.SMALL],
                         [0.796, 0.874, 0.925])
        self.assertNotIn("device_ops.2gpu.run_c.all_to_all.4KiB.cush_vs_raw_nccl", c)  # run C measured reductions only

    def test_halo_goals(self):
        h = self.by_name(halo.figures(load("halo_2026-11-23.json")[0]))
        x = h["halo.2gpu.x.420.d1.time"]
        self.assertEqual((x["value"], x["reference"]), (21.4, 30.3))
        self.assertEqual(h["halo.2gpu.z.420.d1.time"]["value"], 14.3)
        bandwidth = [e for e in h.values() if e["name"].endswith(".bandwidth")]
        self.assertEqual(len(bandwidth), 16)  # per axis: 2048² d2, d4 and every 2896² and 4096² face
        z = [e["ratio"] for e in bandwidth if e["name"].startswith("halo.2gpu.z.")]
        self.assertEqual((min(z), max(z)), (0.951, 0.993))
        self.assertEqual(h["halo.2gpu.z.420.d2.time"]["ratio"], 0.946)

    def test_fft_goals(self):
        one = self.by_name(fft.figures(load("perf_cases_fft_1gpu.json")[0]))
        natural, transposed = one["fft.1gpu.natural.cush_vs_single.2e28"], one["fft.1gpu.transposed_out.cush_vs_single.2e28"]
        self.assertEqual((natural["value"], natural["reference"]), (6.475, 4.165))  # fft.md: 1.555 x
        self.assertEqual(transposed["value"], 5.35)                                 # 1.285 x
        two = self.by_name(fft.figures(load("fft_2vgpu_2026-11-24.json")[0]))
        xt = two["fft.2vgpu.natural.cush_vs_cufftxt.2e28"]
        self.assertEqual((xt["value"], xt["reference"], xt["ratio"]), (6.476, 10.54, 1.628))
        self.assertEqual(xt["virtual_gpus"], "2 logical GPUs on 1: 0 0")
        self.assertEqual(fft.figures(load("fft_e2e_parts_2026-11-24.json")[0]), [])  # no goal in that run

    def test_every_page_row_of_halo_is_a_figure(self):
        h = self.by_name(halo.figures(load("halo_2026-11-23.json")[0]))
        for row in table_rows(section(committed("halo.md"), "## All rows"))[2:]:
            axis, face, depth, *_, raw_over_cush, _, _, _ = [c.strip() for c in row.strip("|").split("|")]
            self.assertEqual(h[f"halo.2gpu.{axis}.{face}.{depth}.time"]["ratio"], float(raw_over_cush), row)


if __name__ == "__main__":
    unittest.main()
