import numpy as np
import matplotlib.pyplot as plt

rng = np.random.default_rng(0)
fig = plt.figure(figsize=(9, 7))
ax = fig.add_subplot(projection='3d')
for name, color, centre in [('Cluster A', 'tab:blue', (0, 0, 0)), ('Cluster B', 'tab:orange', (3, 3, 1)),
                            ('Cluster C', 'tab:green', (-2, 3, 3))]:
    pts = rng.normal(centre, 0.8, size=(80, 3))
    ax.scatter(pts[:, 0], pts[:, 1], pts[:, 2], c=color, label=name, s=25, depthshade=True)
ax.set_xlabel('Feature 1')
ax.set_ylabel('Feature 2')
ax.set_zlabel('Feature 3')
ax.set_title('3D Scatter of Three Clusters')
ax.legend(loc='upper left')
plt.show()
