import matplotlib.pyplot as plt
import pandas as pd

df = pd.read_csv("data.csv")
fig, ax = plt.subplots(figsize=(6, 6))
ax.pie(df["2024"], labels=df["quarter"], autopct="%1.0f%%")
ax.set_title("Revenue share by quarter, 2024")
