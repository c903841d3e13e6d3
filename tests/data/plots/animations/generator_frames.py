import numpy as np
import matplotlib.pyplot as plt
from matplotlib.animation import FuncAnimation

x = np.linspace(0, 2 * np.pi, 200)
fig, ax = plt.subplots()
line, = ax.plot([], [], 'g-', label='sin(x + phase)')
ax.set_xlim(0, 2 * np.pi)
ax.set_ylim(-1.2, 1.2)
ax.set_title('Travelling sine wave')
ax.set_xlabel('x (rad)')
ax.set_ylabel('Amplitude')
ax.legend()

def phases():
    phase = 0.0
    while True:
        phase += 0.1
        yield phase

def update(phase):
    line.set_data(x, np.sin(x + phase))
    return line,

ani = FuncAnimation(fig, update, frames=phases, interval=40, cache_frame_data=False)
plt.show()
