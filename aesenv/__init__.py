"""aesenv: environments and rewards for code aesthetics.

`import aesenv` registers the artifact kinds and, with each, its Gymnasium environments
(`gym.make("AesWeb-v0")`, `gym.make("AesPlotRefine-v0")`, ...).
"""

__version__ = "0.1.0"

import aesenv.kinds  # noqa: E402,F401 - registers the built-in kinds and their env ids
