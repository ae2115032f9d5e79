"""The README's plot: steady u_z across the duct (centre row and centre column of a cross-section)
against White's analytic series, from the CSV files of cush_lbm_profile (cases/lbm/profile.cpp).

Usage: python3 cases/lbm/plot_profile.py cases/lbm/results/profile_*.csv -o cases/lbm/results/profile.png
"""
import argparse
import csv
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(path):
    rows = {"x": [], "y": []}
    with open(path) as f:
        for r in csv.DictReader(f):
            rows[r["axis"]].append((float(r["coordinate"]), float(r["uz"]), float(r["analytic"])))
    return rows


def main():
    p = argparse.ArgumentParser()
    p.add_argument("csv", nargs="+")
    p.add_argument("-o", "--out", required=True)
    a = p.parse_args()
    fig, axes = plt.subplots(1, len(a.csv), figsize=(4.2 * len(a.csv), 3.6), squeeze=False)
    for ax, path in zip(axes[0], a.csv):
        rows = load(path)
        label = os.path.basename(path).removeprefix("profile_").removesuffix(".csv").replace("_", " fluid, ")
        for axis, marker in (("x", "o"), ("y", "s")):
            c, u, ua = zip(*rows[axis])
            ax.plot(c, u, marker, ms=3.5, mfc="none", label=f"LBM, along {axis}")
        c, _, ua = zip(*rows["x"])
        ax.plot(c, ua, "k-", lw=1, label="analytic (White)")
        ax.set_title(f"duct {label}")
        ax.set_xlabel("cells from the centre")
        ax.set_ylabel("u_z (lattice units)")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)


if __name__ == "__main__":
    main()
