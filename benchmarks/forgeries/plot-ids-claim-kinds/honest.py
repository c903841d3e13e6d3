import matplotlib.pyplot as plt
import pandas as pd

df = pd.read_csv("data.csv")
fig, ax = plt.subplots(figsize=(8, 5))
lines = [ax.plot(df["quarter"], df[year], color=colour)[0] for year, colour in (("2023", "#4c72b0"), ("2024", "#dd8452"))]
notes = [ax.text(0.02, 0.95 - 0.06 * i, year, transform=ax.transAxes) for i, year in enumerate(("2023", "2024"))]
