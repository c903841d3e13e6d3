import matplotlib.pyplot as plt
from matplotlib.animation import FuncAnimation
fig, ax = plt.subplots()
ax.plot([0, 1], [0, 1])
def update(i):
    raise RuntimeError("never drawn: nobody keeps the animation")
FuncAnimation(fig, update, frames=10)
