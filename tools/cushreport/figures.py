"""summary.json: one entry per headline figure in docs/results, all of one shape.

Every entry says what was measured (name, value, unit), what it is compared with in the same run
(reference, reference_is) and how it compares (ratio, higher is better for cush), where and when
(device, date) and from which file (source). Entries may add what their page states beside the
figure: the issue's goal it answers (goal), the F-test verdict of a case (f_test), a size.
"""
from .gbench import device_of


def figure(name, value, unit, *, device, date, source, reference=None, reference_is=None, ratio=None, **extra):
    """One summary.json entry; reference, reference_is and ratio appear only with a reference."""
    entry = {"name": name, "value": value, "unit": unit}
    if reference is not None:
        entry.update(reference=reference, reference_is=reference_is, ratio=ratio)
    entry.update(device=device, date=date, source=source)
    entry.update(extra)
    return entry


def measured_in(run):
    """figure()'s device, date and source for a benchmark run."""
    return {"device": device_of(run.context), "date": run.context.get("date", "?"), "source": run.source}
