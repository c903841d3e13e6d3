import numpy as np
import matplotlib.pyplot as plt
from matplotlib import cm

x = np.linspace(-3, 3, 60)
y = np.linspace(-3, 3, 60)
X, Y = np.meshgrid(x, y)
Z = np.sin(np.sqrt(X**2 + Y**2)) * np.exp(-0.1 * (X**2 + Y**2))

fig = plt.figure(figsize=(10, 7))
ax = fig.add_subplot(111, projection='3d')
surf = ax.plot_surface(X, Y, Z, cmap=cm.viridis, edgecolor='none', alpha=0.9)
ax.set_title('Damped Ripple Surface', fontsize=14, fontweight='bold')
fig.colorbar(surf, ax=ax, shrink=0.6, aspect=12, label='Height (m)')
plt.tight_layout()
plt.show()
