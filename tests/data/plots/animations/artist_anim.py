import numpy as np
import matplotlib.pyplot as plt
from matplotlib.animation import ArtistAnimation
fig, ax = plt.subplots()
x = np.linspace(0, 6, 100)
frames = [ax.plot(x, np.sin(x + p), color='tab:blue') for p in np.linspace(0, 3, 20)]
ax.set_title('Phase shift')
ani = ArtistAnimation(fig, frames, interval=50, blit=True)
