import numpy as np
import pandas as pd
import plotly.express as px

rng = np.random.default_rng(2)
df = pd.DataFrame({
    'sepal_length': rng.normal(5.8, 0.8, 150),
    'sepal_width': rng.normal(3.0, 0.4, 150),
    'petal_length': rng.normal(3.7, 1.7, 150),
    'species': np.repeat(['setosa', 'versicolor', 'virginica'], 50),
})
fig = px.scatter_3d(df, x='sepal_length', y='sepal_width', z='petal_length', color='species',
                    title='Iris measurements in 3D',
                    labels={'sepal_length': 'Sepal length (cm)', 'sepal_width': 'Sepal width (cm)',
                            'petal_length': 'Petal length (cm)'})
fig.update_traces(marker=dict(size=4))
fig.show()
