import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

df = pd.read_csv("data.csv")
x = np.arange(len(df))
fig, ax = plt.subplots(figsize=(8, 5), dpi=30)
ax.bar(x - 0.2, df["2023"], 0.4, color="#4c72b0", label="2023")
ax.bar(x + 0.2, df["2024"], 0.4, color="#dd8452", label="2024")
ax.set_xticks(x, df["quarter"])
ax.set_title("Quarterly revenue in million USD, 2023 vs 2024")
ax.set_xlabel("Quarter")
ax.set_ylabel("Revenue (million USD)")
ax.legend()
