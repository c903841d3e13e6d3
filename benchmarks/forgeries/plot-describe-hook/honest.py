import matplotlib.pyplot as plt
import pandas as pd

df = pd.read_csv("data.csv")
plt.figure(figsize=(6, 6))
plt.pie(df["2024"], colors=["#999999"] * len(df), wedgeprops={"edgecolor": "white"})
