import numpy as np
import pandas as pd
import matplotlib.pyplot as plt
from matplotlib.animation import FuncAnimation

days = pd.date_range('2024-01-01', periods=120)
price = 100 + np.cumsum(np.random.default_rng(0).normal(0, 1.5, len(days)))
fig, ax = plt.subplots(figsize=(10, 6))
line, = ax.plot([], [], color='tab:blue', lw=2, label='Closing price')
ax.set_xlim(days[0], days[-1])
ax.set_ylim(price.min() - 5, price.max() + 5)
ax.set_title('Stock price over time')
ax.set_xlabel('Date')
ax.set_ylabel('Price (USD)')
ax.legend(loc='upper left')

def init():
    line.set_data([], [])
    return line,

def update(i):
    line.set_data(days[:i + 1], price[:i + 1])
    return line,

ani = FuncAnimation(fig, update, frames=len(days), init_func=init, blit=True, interval=50)
plt.show()
