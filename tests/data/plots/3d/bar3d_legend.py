import numpy as np
import matplotlib.pyplot as plt
from matplotlib.patches import Patch

products = ['Widgets', 'Gadgets', 'Doohickeys']
years = [2021, 2022, 2023]
values = np.array([[120, 135, 150], [90, 110, 95], [60, 80, 105]])
colors = ['#4c72b0', '#dd8452', '#55a868']
fig = plt.figure(figsize=(10, 7))
ax = fig.add_subplot(111, projection='3d')
for i, product in enumerate(products):
    ax.bar3d(np.arange(3), [i] * 3, [0] * 3, 0.5, 0.5, values[i], color=colors[i], shade=True)
ax.set_xticks(np.arange(3) + 0.25)
ax.set_xticklabels(years)
ax.set_yticks(np.arange(3) + 0.25)
ax.set_yticklabels(products)
ax.set_zlabel('Units sold')
ax.set_xlabel('Year')
ax.set_ylabel('Product')
ax.set_title('Units sold per product and year')
ax.legend(handles=[Patch(color=c, label=p) for c, p in zip(colors, products)], loc='upper left')
plt.show()
