import numpy as np
import matplotlib.pyplot as plt

plt.style.use('dark_background')
rng = np.random.default_rng(3)
x = rng.uniform(-2, 2, 400)
y = rng.uniform(-2, 2, 400)
z = np.exp(-(x ** 2 + y ** 2)) * np.cos(2 * x)
fig = plt.figure(figsize=(10, 8))
ax = fig.add_subplot(111, projection='3d')
trisurf = ax.plot_trisurf(x, y, z, cmap='magma', linewidth=0.1, edgecolor='none')
ax.set_title('Terrain from scattered samples', color='white', fontsize=14)
ax.set_xlabel('Easting (km)')
ax.set_ylabel('Northing (km)')
ax.set_zlabel('Elevation (km)')
fig.colorbar(trisurf, ax=ax, shrink=0.5, label='Elevation (km)')
plt.show()
