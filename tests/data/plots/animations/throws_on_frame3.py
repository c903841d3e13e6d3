import numpy as np
import matplotlib.pyplot as plt
from matplotlib.animation import FuncAnimation

data = [np.random.default_rng(i).normal(0, 1, 100) for i in range(3)]
fig, ax = plt.subplots()
ax.set_title('Sample histograms')
ax.set_xlabel('Value')
ax.set_ylabel('Count')

def update(i):
    ax.cla()
    ax.hist(data[i], bins=15, color='steelblue')   # IndexError on frame 3: only three samples
    ax.set_title(f'Sample {i + 1}')
    ax.set_xlabel('Value')
    ax.set_ylabel('Count')

ani = FuncAnimation(fig, update, frames=10, interval=500)
plt.show()
