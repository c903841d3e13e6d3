import numpy as np
import matplotlib.pyplot as plt
import matplotlib.animation as animation

rng = np.random.default_rng(1)
pos = rng.uniform(0, 10, (50, 2))
vel = rng.normal(0, 0.2, (50, 2))
fig, ax = plt.subplots(figsize=(8, 8))
scat = ax.scatter([], [], s=40, c='tab:red', label='Particles')
ax.set_xlim(0, 10)
ax.set_ylim(0, 10)
ax.set_title('Particle simulation')
ax.set_xlabel('x (m)')
ax.set_ylabel('y (m)')
ax.legend()

def animate(frame):
    global pos
    pos = (pos + vel) % 10
    scat.set_offsets(pos)
    return scat,

anim = animation.FuncAnimation(fig, animate, frames=200, interval=30, blit=False)
plt.show()
