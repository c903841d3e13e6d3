"""The `vllm serve` command line for an open VLM judge, and how aesenv then reaches it.

Kept as data (a list of arguments) so the CLI prints exactly what the tests run: the vLLM tests
start their tiny CPU server from the same builder, so a flag vLLM no longer accepts fails there.
"""

from __future__ import annotations

import json
import shlex

from pydantic import BaseModel, Field

from aesenv.models import DEFAULT_VLM_JUDGE


class JudgeServer(BaseModel):
    """How to serve the judge model. The defaults fit a Qwen2.5-VL-7B judge on one 80 GB GPU."""

    model: str = DEFAULT_VLM_JUDGE.removeprefix("openai:")
    host: str = "0.0.0.0"
    port: int = Field(default=8000, ge=1, le=65535)
    tensor_parallel_size: int = Field(default=1, ge=1)
    max_model_len: int = Field(default=32768, ge=256, description="screenshots cost ~1-3k tokens each")
    images_per_prompt: int = Field(default=4, ge=0, description="the web agent keeps 3 recent screens, plus one")
    gpu_memory_utilization: float | None = Field(default=0.90, gt=0, le=1)
    tool_call_parser: str | None = Field(default="hermes", description="Qwen models emit hermes-style tool calls")
    extra: list[str] = Field(default_factory=list, description="further `vllm serve` arguments, verbatim")

    def command(self) -> list[str]:
        args = ["vllm", "serve", self.model, "--host", self.host, "--port", str(self.port),
                "--served-model-name", self.model, "--max-model-len", str(self.max_model_len),
                "--tensor-parallel-size", str(self.tensor_parallel_size),
                # the model's own sampling defaults would override the judge's temperature 0
                "--generation-config", "vllm"]
        if self.images_per_prompt:
            args += ["--limit-mm-per-prompt", json.dumps({"image": self.images_per_prompt})]
        if self.gpu_memory_utilization is not None:
            args += ["--gpu-memory-utilization", f"{self.gpu_memory_utilization:.2f}"]
        if self.tool_call_parser:
            args += ["--enable-auto-tool-choice", "--tool-call-parser", self.tool_call_parser]
        return args + self.extra

    def instructions(self, reach_host: str = "<this-host>") -> str:
        """The command and the two lines that point aesenv at the server once it is up."""
        base_url = f"http://{reach_host}:{self.port}/v1"
        return "\n".join([
            "# on the GPU node (vLLM installed; the weights download on first start):",
            shlex.join(self.command()),
            "# then, where aesenv runs (no key needed unless you add --api-key to the server):",
            f"export OPENAI_BASE_URL={base_url}",
            f"aesenv bench opendesign --judge openai:{self.model} --out runs/opendesign",
            f"# training: set reward_kwargs.judge=openai:{self.model} and judge_base_url={base_url}",
        ])
