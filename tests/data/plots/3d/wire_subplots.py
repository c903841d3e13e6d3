import numpy as np
import matplotlib.pyplot as plt

X, Y = np.meshgrid(np.linspace(-2, 2, 30), np.linspace(-2, 2, 30))
fig, axes = plt.subplots(1, 2, figsize=(14, 6), subplot_kw={'projection': '3d'})
axes[0].plot_wireframe(X, Y, X**2 - Y**2, color='steelblue', rstride=2, cstride=2)
axes[0].set_title('Saddle: z = x² − y²')
axes[1].plot_surface(X, Y, np.exp(-(X**2 + Y**2)), cmap='plasma')
axes[1].set_title('Gaussian bump')
for ax in axes:
    ax.set_xlabel('x')
    ax.set_ylabel('y')
    ax.set_zlabel('z')
fig.suptitle('Two surfaces', fontsize=15)
plt.show()
