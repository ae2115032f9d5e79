"""What the tests of tools/cushreport need: the package on the path, and a skip reason for each
missing dependency (scripts/setup.sh installs them all), so that a missing one skips, not fails."""
import importlib.util
import os
import shutil
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
RESULTS = os.path.join(ROOT, "docs", "results")
DATA = os.path.join(RESULTS, "data")  # the measurements the pages quote
sys.path.insert(0, os.path.join(ROOT, "tools"))


def missing(*modules):
    """Why tests needing these Python modules (and "pmccabe", the program) cannot run; "" if they can."""
    absent = [m for m in modules if (shutil.which(m) is None if m == "pmccabe" else importlib.util.find_spec(m) is None)]
    return f"needs {', '.join(absent)} (scripts/setup.sh installs them)" if absent else ""


NUMERIC = missing("numpy", "scipy")
REPORT = missing("numpy", "scipy", "matplotlib")
