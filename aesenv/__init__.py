"""aesenv: environments and rewards for code aesthetics.

`import aesenv` registers the Gymnasium environments (`gym.make("AesWeb-v0")`).
"""

__version__ = "0.1.0"

from aesenv.envs import register_envs  # noqa: E402

register_envs()
