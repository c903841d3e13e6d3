import numpy as np
import matplotlib.pyplot as plt
from matplotlib.animation import FuncAnimation

t = np.linspace(0, 10, 300)
fig, ax = plt.subplots(figsize=(9, 5))
ax.set_xlim(0, 10)
ax.set_ylim(-1.1, 1.1)
ax.set_title('Damped oscillation')
ax.set_xlabel('Time (s)')
ax.set_ylabel('Displacement (m)')
line, = ax.plot(t, np.exp(-0.2 * t) * np.cos(3 * t), color='purple', label='x(t)')
dot, = ax.plot([], [], 'o', color='black')
ax.legend(loc='upper right')

def init():
    line.set_data([], [])
    dot.set_data([], [])
    return line, dot

def update(i):
    line.set_data(t[:i], np.exp(-0.2 * t[:i]) * np.cos(3 * t[:i]))
    if i:
        dot.set_data([t[i - 1]], [np.exp(-0.2 * t[i - 1]) * np.cos(3 * t[i - 1])])
    return line, dot

ani = FuncAnimation(fig, update, frames=300, init_func=init, blit=True, interval=20)
plt.show()
