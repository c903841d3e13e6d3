"""aesenv: environments and rewards for code aesthetics.

`import aesenv` registers the artifact kinds and their Gymnasium environments by name
(`gym.make("AesWeb-v0")`, `gym.make("AesPlotRefine-v0")`, ...) and loads nothing else: a kind,
its judges and the browser are imported when first used.
"""

from aesenv.version import __version__

import aesenv.kinds  # noqa: E402,F401 - registers the built-in kinds and their env ids, lazily

__all__ = ["__version__"]
