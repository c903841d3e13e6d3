import numpy as np
import matplotlib.pyplot as plt

rng = np.random.default_rng(1)
n = 300
age = rng.uniform(20, 70, n)
income = 20 + 1.2 * age + rng.normal(0, 10, n)
spend = 0.4 * income + rng.normal(0, 5, n)
fig = plt.figure(figsize=(10, 8))
ax = fig.add_subplot(111, projection='3d')
sc = ax.scatter(age, income, spend, c=spend, cmap='viridis', s=30, alpha=0.8, edgecolors='w', linewidth=0.3)
ax.xaxis.pane.fill = False
ax.yaxis.pane.fill = False
ax.zaxis.pane.fill = False
ax.xaxis.pane.set_edgecolor('lightgray')
ax.yaxis.pane.set_edgecolor('lightgray')
ax.zaxis.pane.set_edgecolor('lightgray')
ax.grid(False)
ax.set_xlabel('Age (years)', fontsize=12, labelpad=10)
ax.set_ylabel('Income (k$)', fontsize=12, labelpad=10)
ax.set_zlabel('Spending (k$)', fontsize=12, labelpad=10)
ax.set_title('Customer Age, Income and Spending', fontsize=15, fontweight='bold')
cbar = fig.colorbar(sc, ax=ax, shrink=0.6, pad=0.1)
cbar.set_label('Spending (k$)')
plt.tight_layout()
plt.show()
