import numpy as np
import matplotlib.pyplot as plt

months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun']
regions = ['North', 'South', 'East', 'West']
sales = np.array([[12, 15, 14, 18, 20, 22], [8, 9, 11, 10, 13, 15], [5, 7, 6, 9, 8, 11], [10, 12, 13, 12, 16, 17]])

fig = plt.figure(figsize=(12, 8))
ax = fig.add_subplot(111, projection='3d')
colors = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728']
for i, (region, color) in enumerate(zip(regions, colors)):
    xs = np.arange(len(months))
    ax.bar3d(xs, np.full(len(months), i), np.zeros(len(months)), 0.6, 0.6, sales[i], color=color, alpha=0.8, label=region)
ax.set_xticks(np.arange(len(months)) + 0.3)
ax.set_xticklabels(months)
ax.set_yticks(np.arange(len(regions)) + 0.3)
ax.set_yticklabels(regions)
ax.set_xlabel('Month', labelpad=10)
ax.set_ylabel('Region', labelpad=10)
ax.set_zlabel('Sales (k units)', labelpad=10)
ax.set_title('Monthly Sales by Region', fontsize=16, pad=20)
ax.view_init(elev=25, azim=-60)
plt.tight_layout()
plt.savefig('sales_3d.png', dpi=300, bbox_inches='tight')
plt.show()
