import matplotlib.pyplot as plt
from matplotlib.animation import FuncAnimation
fig, ax = plt.subplots()
ax.plot([0, 1], [0, 1])
def update(i):
    raise RuntimeError("never drawn: its figure is closed")
ani = FuncAnimation(fig, update, frames=10)
plt.close(fig)
fig2, ax2 = plt.subplots()
ax2.bar(["a", "b"], [1, 2])
