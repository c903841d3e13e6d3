"""A CPU device platform for veRL, registered through its own platform registry (never by editing
veRL): the smoke runs (`python -m train.smoke`) train on machines without an accelerator.

Selected explicitly with `VERL_PLATFORM=cpu` (the smoke sets it for the driver and every Ray
worker): it never wins veRL's auto-detection, so a GPU node keeps veRL's CUDA platform.

veRL places each worker on one Ray "GPU" bundle and counts the cluster's GPU resource before it
starts; on CPU those are logical slots (`ray_init.num_gpus`), one per trainer rank, and no device
is behind them. Collectives run over gloo.
"""

from __future__ import annotations

import os
import types
from contextlib import contextmanager
from typing import Any, Optional

import torch
from verl.plugin.platform.platform_base import PlatformBase
from verl.plugin.platform.platform_manager import PlatformRegistry

PLATFORM_NAME = "cpu"


def _no_op(*args: Any, **kwargs: Any) -> None:
    return None


def _zero(*args: Any, **kwargs: Any) -> int:
    return 0


def _memory_info(*args: Any, **kwargs: Any) -> tuple[int, int]:
    """(free, total) host memory: veRL logs device memory around every phase."""
    import psutil

    memory = psutil.virtual_memory()
    return memory.available, memory.total


def _device_module() -> types.ModuleType:
    """`torch.cpu` plus the `torch.cuda`-style calls veRL makes on its device module (memory
    accounting, caches, seeds), which on the host have nothing to do or nothing to report."""
    module = types.ModuleType("aesenv_cpu_device")
    for name in dir(torch.cpu):
        if not name.startswith("_"):
            setattr(module, name, getattr(torch.cpu, name))
    # "cpu", as torch.cpu.current_device() answers: veRL moves tensors and modules `.to(device id)`,
    # and an integer id would mean an accelerator there.
    module.current_device = lambda: "cpu"
    module.device_count = lambda: 1
    module.set_device = _no_op
    module.empty_cache = _no_op
    module.ipc_collect = _no_op
    module.reset_peak_memory_stats = _no_op
    module.set_per_process_memory_fraction = _no_op
    for name in ("memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved"):
        setattr(module, name, _zero)
    module.mem_get_info = _memory_info
    module.memory_stats = lambda *a, **k: {}
    module.manual_seed = torch.manual_seed
    module.manual_seed_all = torch.manual_seed
    module.get_rng_state = lambda *a, **k: torch.get_rng_state()
    module.set_rng_state = lambda state, *a, **k: torch.set_rng_state(state)
    module.get_device_name = lambda *a, **k: "cpu"
    module.get_device_capability = lambda *a, **k: (None, None)
    module.is_bf16_supported = lambda *a, **k: True
    return module


class PlatformCPU(PlatformBase):
    """The host CPU as veRL's device: gloo collectives, logical Ray GPU slots, no profiler."""

    def __init__(self) -> None:
        self._module = _device_module()

    @property
    def device_name(self) -> str:
        return "cpu"

    @property
    def vendor_name(self) -> str:
        return "cpu"

    @property
    def device_module(self) -> types.ModuleType:
        return self._module

    def is_available(self) -> bool:
        return True

    def is_platform_available(self, use_smi_check: bool = False) -> bool:
        return False  # never auto-detected: VERL_PLATFORM=cpu picks it

    def current_device(self) -> str:
        return "cpu"  # veRL uses the id as a target for `.to(...)`; 0 would mean an accelerator

    def device_count(self) -> int:
        return 1

    def set_device(self, device_index: int) -> None:
        return None

    def synchronize(self, device_index: Optional[int] = None) -> None:
        return None

    def manual_seed(self, seed: int) -> None:
        torch.manual_seed(seed)

    def manual_seed_all(self, seed: int) -> None:
        torch.manual_seed(seed)

    def set_allocator_settings(self, settings: str) -> None:
        return None

    def empty_cache(self) -> None:
        return None

    def get_device_capability(self, device_index: int = 0) -> tuple[Optional[int], Optional[int]]:
        return None, None

    def communication_backend_name(self) -> str:
        return "gloo"

    def visible_devices_envvar(self) -> str:
        return "CUDA_VISIBLE_DEVICES"

    def ray_resource_name(self) -> str:
        return "GPU"  # logical slots declared with ray_init.num_gpus: one per trainer rank

    def ray_noset_envvars(self) -> list[str]:
        return ["RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES"]

    def is_ipc_supported(self) -> bool:
        return False

    def rollout_env_vars(self) -> dict[str, str]:
        return {}

    def get_collective_module(self) -> Any:
        return None

    def cudart(self) -> Any:
        return None

    @contextmanager
    def nvtx_range(self, msg: str):
        yield

    def profiler_start(self) -> None:
        return None

    def profiler_stop(self) -> None:
        return None


def _host_only_process_group(initialize):
    """veRL's worker start asks torch for the backend `cpu:gloo,<device>:<backend>`, which torch
    refuses when the device is the CPU itself (`cpu` twice). On this platform the one host backend
    is the whole answer; on any other platform the call goes through unchanged."""
    if getattr(initialize, "aesenv", False):
        return initialize

    def initialize_process_group(timeout_second=None, backend=None):
        from verl.plugin.platform import get_platform

        if backend is None and isinstance(get_platform(), PlatformCPU):
            backend = "cpu:gloo"
        return initialize(timeout_second=timeout_second, backend=backend)

    initialize_process_group.aesenv = True
    return initialize_process_group


def _register_fsdp_engines() -> None:
    """veRL's FSDP engines for this device: veRL registers them for cuda and npu only, and they
    run on the host as they are (FSDP over gloo). Done only when this platform is selected: it
    imports the engines, which a GPU run's processes import on their own."""
    from verl.workers.engine import EngineRegistry
    from verl.workers.engine.fsdp.transformer_impl import FSDPEngineWithLMHead, FSDPEngineWithValueHead

    for model_type, engine in (("language_model", FSDPEngineWithLMHead), ("value_model", FSDPEngineWithValueHead)):
        for backend in ("fsdp", "fsdp2"):
            if PLATFORM_NAME not in EngineRegistry._engines.get(model_type, {}).get(backend, {}):
                EngineRegistry.register(model_type=model_type, backend=backend, device=PLATFORM_NAME)(engine)


def selected() -> bool:
    return os.environ.get("VERL_PLATFORM", "").strip().lower() == PLATFORM_NAME


def register_platform() -> None:
    """The platform alone: registered before anything asks veRL for its platform."""
    if PlatformRegistry.get(PLATFORM_NAME) is None:
        PlatformRegistry.register(platform=PLATFORM_NAME)(PlatformCPU)


def register() -> None:
    """Register the platform, and wrap veRL's process-group start before its workers bind it by
    name (`from verl.utils.distributed import initialize_global_process_group_ray`)."""
    register_platform()
    import sys

    from verl.utils import distributed

    for module in (distributed, sys.modules.get("verl.workers.engine_workers"),
                   sys.modules.get("verl.checkpoint_engine.base")):
        current = getattr(module, "initialize_global_process_group_ray", None)
        if current is not None:
            module.initialize_global_process_group_ray = _host_only_process_group(current)
    if selected():
        _register_fsdp_engines()
