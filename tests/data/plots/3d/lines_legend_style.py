import numpy as np
import matplotlib.pyplot as plt

plt.style.use('seaborn-v0_8-whitegrid')
t = np.linspace(0, 10, 500)
fig = plt.figure(figsize=(11, 8))
ax = fig.add_subplot(projection='3d')
for k, color in zip([1, 2, 3], ['#e41a1c', '#377eb8', '#4daf4a']):
    ax.plot(np.cos(k * t) * t, np.sin(k * t) * t, t, color=color, lw=1.8, label=f'Frequency {k}')
ax.set_xlabel('X')
ax.set_ylabel('Y')
ax.set_zlabel('Time')
ax.set_title('Spiral trajectories', fontsize=16)
ax.legend(title='Series', loc='upper right')
ax.set_box_aspect((1, 1, 0.8))
ax.view_init(elev=20, azim=35)
plt.show()
