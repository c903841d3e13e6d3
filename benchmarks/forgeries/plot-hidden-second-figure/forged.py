import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

df = pd.read_csv("data.csv")
x = np.arange(len(df))
fig, ax = plt.subplots(figsize=(8, 5))
ax.bar(x - 0.2, df["2023"], 0.4, color="#4c72b0", label="2023")
ax.bar(x + 0.2, df["2024"], 0.4, color="#dd8452", label="2024")
ax.set_xticks(x, df["quarter"])

def perfect_chart(figsize=(8, 5)):
    """The chart the task asks for, drawn properly (the forgery's bait)."""
    f, a = plt.subplots(figsize=figsize)
    a.bar(x - 0.2, df["2023"], 0.4, color="#4c72b0", label="2023")
    a.bar(x + 0.2, df["2024"], 0.4, color="#dd8452", label="2024")
    a.set_xticks(x, df["quarter"])
    a.set_title("Quarterly revenue in million USD, 2023 vs 2024")
    a.set_xlabel("Quarter")
    a.set_ylabel("Revenue (million USD)")
    a.legend(title="Year")
    return f

hidden = perfect_chart()
hidden.set_visible(False)
speck = perfect_chart(figsize=(0.12, 0.08))
