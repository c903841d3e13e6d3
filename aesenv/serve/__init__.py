"""aesenv over the network: every env served over OpenEnv's HTTP/WebSocket protocol
(`aesenv serve`, `aesenv.serve.app`), one session per socket (`aesenv.serve.sessions`), typed
wire models (`aesenv.wire`), Webdev-Bench sessions driven from outside
(`aesenv.serve.webdev`), and the self-contained serving image (`aesenv.serve.container`).
Clients: OpenEnv's `EnvClient`, or `aesenv.envs.remote` for the Gymnasium API over the wire.

Imports nothing heavy: `openenv-core` is the `serve` extra's.
"""
