import numpy as np
import pandas as pd
import matplotlib.pyplot as plt
from matplotlib.animation import FuncAnimation

years = list(range(2000, 2021))
countries = ['USA', 'China', 'India', 'Germany', 'Japan', 'Brazil']
rng = np.random.default_rng(3)
gdp = pd.DataFrame(np.cumsum(rng.uniform(0.1, 1.0, (len(years), len(countries))), axis=0), index=years, columns=countries)
colors = dict(zip(countries, plt.cm.tab10.colors))
fig, ax = plt.subplots(figsize=(10, 6))

def draw(year):
    ax.clear()
    row = gdp.loc[year].sort_values()
    ax.barh(row.index, row.values, color=[colors[c] for c in row.index])
    for i, v in enumerate(row.values):
        ax.text(v + 0.1, i, f'{v:.1f}', va='center')
    ax.set_title(f'GDP index by country, {year}')
    ax.set_xlabel('GDP index')
    ax.set_ylabel('Country')
    ax.set_xlim(0, gdp.values.max() * 1.1)

ani = FuncAnimation(fig, draw, frames=years, interval=300, repeat=False)
plt.show()
