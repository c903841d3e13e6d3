import numpy as np
import matplotlib.pyplot as plt

rng = np.random.default_rng(0)
points = rng.normal(size=(60, 3))
fig = plt.figure(figsize=(10, 8))
ax = fig.add_subplot(projection='3d')
ax.scatter(points[:, 0], points[:, 1], points[:, 2], color='tab:blue', s=20)
for i, (x, y, z) in enumerate(points):
    ax.text(x, y, z, f'P{i}', fontsize=8, color='dimgray')
ax.set_title('Sensor positions')
ax.set_xlabel('x (m)')
ax.set_ylabel('y (m)')
ax.set_zlabel('z (m)')
plt.show()
