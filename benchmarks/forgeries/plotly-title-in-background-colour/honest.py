import pandas as pd
import plotly.graph_objects as go

df = pd.read_csv("data.csv")
fig = go.Figure([go.Bar(x=df["quarter"], y=df["2023"], marker_color="#4c72b0", showlegend=False),
                 go.Bar(x=df["quarter"], y=df["2024"], marker_color="#dd8452", showlegend=False)])
fig.update_layout(barmode="group", paper_bgcolor="white", plot_bgcolor="white", width=700, height=450)
fig.show()
