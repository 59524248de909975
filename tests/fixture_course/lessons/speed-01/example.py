import os
from pathlib import Path

import numpy as np

from builder import panels

numbers = np.loadtxt(Path(__file__).with_name("numbers.txt"))
scale = int(os.environ.get("FIXTURE_SCALE", "1"))
print(f"sum {numbers.sum():g} scaled {scale * numbers.sum():g}")
panels.bar(
    "Sums",
    labels=["sum", "max"],
    ylabel="value (units)",
    series={
        "plain": [numbers.sum(), numbers.max()],
        "scaled": [scale * numbers.sum(), scale * numbers.max()],
    },
)
