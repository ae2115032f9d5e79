"""Shared by the report's charts."""
import os


def save(fig, out_dir, name):
    """Writes a matplotlib figure as out_dir/name and closes it; returns the path."""
    import matplotlib.pyplot as plt
    path = os.path.join(out_dir, name)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
