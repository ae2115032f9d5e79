"""The karst inversion's plot: the observed and the fitted outlet curve, the inlet dashed, from the
curves CSV of karst_fit (cases/karst/fit.cpp: step, time, inlet, observed, fitted).

Usage: python3 cases/karst/plot_fit.py curves.csv -o fit.png [--title "fitted Pe = ..."]
"""
import argparse
import csv

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(path):
    columns = {"time": [], "inlet": [], "observed": [], "fitted": []}
    with open(path) as f:
        for row in csv.DictReader(f):
            for name, values in columns.items():
                values.append(float(row[name]))
    return columns


def main():
    p = argparse.ArgumentParser()
    p.add_argument("csv")
    p.add_argument("-o", "--out", required=True)
    p.add_argument("--title", default="karst inversion")
    a = p.parse_args()
    c = load(a.csv)
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    ax.plot(c["time"], c["inlet"], "k--", lw=1, label="inlet")
    ax.plot(c["time"], c["observed"], "o", ms=2.5, mfc="none", markevery=max(1, len(c["time"]) // 150),
            label="observed outlet")
    ax.plot(c["time"], c["fitted"], "-", lw=1.5, label="fitted outlet")
    ax.set_xlabel("t* (dimensionless time)")
    ax.set_ylabel("T* (dimensionless temperature)")
    ax.set_title(a.title, fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)


if __name__ == "__main__":
    main()
