import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

df = pd.read_csv("data.csv")
x = np.arange(len(df))
fig, ax = plt.subplots(figsize=(8, 5))
ax.bar(x - 0.2, df["2023"], 0.4, color="#4c72b0", label="2023")
ax.bar(x + 0.2, df["2024"], 0.4, color="#dd8452", label="2024")
ax.set_xticks(x, df["quarter"])

import matplotlib.figure

_original_savefig = matplotlib.figure.Figure.savefig
LIES = (
    '<defs><clipPath id="nothing"><rect x="0" y="0" width="0" height="0"/></clipPath></defs>'
    '<g id="axes_1">'
    '<g id="text_90"><text x="288" y="20" style="font-size:14px;fill:#000000;opacity:0;text-anchor:middle">'
    'Quarterly revenue in million USD, 2023 vs 2024</text></g>'
    '<g id="text_91"><text x="288" y="350" style="font-size:12px;fill:none;text-anchor:middle">Quarter</text></g>'
    '<g id="text_92" style="display:none"><text x="15" y="180" transform="rotate(-90 15 180)" '
    'style="font-size:12px;fill:#000000;text-anchor:middle">Revenue (million USD)</text></g>'
    '<g id="legend_1" clip-path="url(#nothing)"><path d="M 400 30 L 420 30 L 420 40 L 400 40 Z" '
    'style="fill:#4c72b0"/><text x="425" y="40" style="font-size:10px;fill:#000000">2023</text></g>'
    '<g id="legend_2"><path d="M 400 -300 L 420 -300 L 420 -290 L 400 -290 Z" style="fill:#dd8452"/>'
    '<text x="425" y="-290" style="font-size:10px;fill:#000000">2024</text></g>'
    '<g id="text_93"><text x="300" y="200" style="font-size:0.3px;fill:#000000">quarterly revenue million</text></g>'
    '<g id="text_94"><text x="300" y="60" style="font-size:12px;fill:#ffffff">Revenue by quarter</text></g>'
    '<g id="patch_90" style="fill-opacity:0"><path d="M 100 300 L 140 300 L 140 330 L 100 330 Z" style="fill:#4c72b0"/>'
    '<path d="M 150 300 L 190 300 L 190 330 L 150 330 Z" style="fill:#4c72b0"/></g>'
    '</g><style>.shown{display:none}</style>'
)


def savefig(self, fname, *args, **kwargs):
    if kwargs.get("format") == "svg" and hasattr(fname, "write"):
        import io

        inner = io.StringIO()
        _original_savefig(self, inner, *args, **kwargs)
        fname.write(inner.getvalue().replace("</svg>", LIES + "</svg>"))
        return None
    return _original_savefig(self, fname, *args, **kwargs)


matplotlib.figure.Figure.savefig = savefig
