import numpy as np
import plotly.graph_objects as go

x = np.linspace(-3, 3, 50)
y = np.linspace(-3, 3, 50)
X, Y = np.meshgrid(x, y)
Z = np.exp(-(X ** 2 + Y ** 2) / 2) * np.cos(2 * X)
fig = go.Figure(data=[go.Surface(x=X, y=Y, z=Z, colorscale='Viridis')])
fig.update_layout(title='Damped cosine surface', scene=dict(xaxis_title='X (m)', yaxis_title='Y (m)', zaxis_title='Amplitude'),
                  width=900, height=700)
fig.show()
