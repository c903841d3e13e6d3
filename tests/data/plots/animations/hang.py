import matplotlib.pyplot as plt
from matplotlib.animation import FuncAnimation
fig, ax = plt.subplots()
line, = ax.plot([0, 1], [0, 1])
def update(i):
    if i == 2:
        while True:
            try:
                pass
            except Exception:
                pass
    line.set_ydata([0, i])
ani = FuncAnimation(fig, update, frames=10)
