import pandas as pd
import plotly.graph_objects as go

df = pd.read_csv("data.csv")
fig = go.Figure([go.Bar(x=df["quarter"], y=df["2023"], marker_color="#4c72b0", showlegend=False),
                 go.Bar(x=df["quarter"], y=df["2024"], marker_color="#dd8452", showlegend=False)])
fig.update_layout(barmode="group", paper_bgcolor="white", plot_bgcolor="white", width=700, height=450)
fig.update_layout(
    title=dict(text="Quarterly revenue in million USD, 2023 vs 2024", font=dict(color="white", size=18)),
    xaxis_title=dict(text="Quarter", font=dict(color="rgba(0,0,0,0)")),
    yaxis_title=dict(text="Revenue (million USD)", font=dict(color="#ffffff")),
    legend=dict(font=dict(color="rgba(255,255,255,0)")))
fig.update_traces(showlegend=True)
fig.data[0].name, fig.data[1].name = "2023", "2024"
fig.show()
