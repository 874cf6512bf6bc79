"""A local stand-in for the Hugging Face Hub (aiohttp on 127.0.0.1): config.json files and safetensors headers.

It serves what huggingface_hub asks for (read in its installed source, huggingface_hub 2.4: hf_api.py
`get_safetensors_metadata`, `file_exists`, `parse_safetensors_file_metadata`; file_download.py
`get_hf_file_metadata`, `hf_hub_download`; utils/_http.py `hf_raise_for_status`):
HEAD and GET (with "Range: bytes=a-b") of /{org}/{name}/resolve/{revision}/{file}, the X-Repo-Commit / ETag
headers a HEAD answers with, and X-Error-Code (RepoNotFound, GatedRepo, EntryNotFound) on errors.

The configs below are the models' published config.json values (the same numbers as engine/models/data.yaml,
which names where each was read); the safetensors headers list each model's tensors with their real shapes, built
from the config, so the parameter count the headers give is the model's own (Qwen2.5-0.5B: 494,032,768).
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import struct
import threading
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

QWEN25_05B = {  # Qwen/Qwen2.5-0.5B config.json
    "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 896, "intermediate_size": 4864,
    "num_hidden_layers": 24, "num_attention_heads": 14, "num_key_value_heads": 2, "vocab_size": 151936,
    "max_position_embeddings": 32768, "tie_word_embeddings": True, "sliding_window": 32768,
    "use_sliding_window": False, "max_window_layers": 24, "rope_theta": 1000000.0, "torch_dtype": "bfloat16",
}
LLAMA31_8B = {  # meta-llama/Llama-3.1-8B config.json
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
    "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256,
    "max_position_embeddings": 131072, "tie_word_embeddings": False, "rope_theta": 500000.0,
    "torch_dtype": "bfloat16",
}
MISTRAL_7B_V01 = {  # mistralai/Mistral-7B-v0.1 config.json: a 4,096-token sliding window on every layer
    "architectures": ["MistralForCausalLM"], "model_type": "mistral", "hidden_size": 4096,
    "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
    "vocab_size": 32000, "max_position_embeddings": 32768, "sliding_window": 4096, "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
}
MIXTRAL_8X7B = {  # mistralai/Mixtral-8x7B-v0.1 config.json
    "architectures": ["MixtralForCausalLM"], "model_type": "mixtral", "hidden_size": 4096,
    "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
    "num_local_experts": 8, "num_experts_per_tok": 2, "vocab_size": 32000, "max_position_embeddings": 32768,
    "sliding_window": None, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
}
SMOLLM2_17B = {  # HuggingFaceTB/SmolLM2-1.7B config.json: a model the registry does not list (1,711,376,384 params)
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 2048, "intermediate_size": 8192,
    "num_hidden_layers": 24, "num_attention_heads": 32, "num_key_value_heads": 32, "vocab_size": 49152,
    "max_position_embeddings": 8192, "tie_word_embeddings": True, "rope_theta": 130000, "torch_dtype": "bfloat16",
}
DEEPSEEK_V3 = {  # deepseek-ai/DeepSeek-V3 config.json (MLA, 256 routed experts, FP8 weights)
    "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 7168,
    "intermediate_size": 18432, "moe_intermediate_size": 2048, "num_hidden_layers": 61,
    "num_attention_heads": 128, "num_key_value_heads": 128, "kv_lora_rank": 512, "q_lora_rank": 1536,
    "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128, "n_routed_experts": 256,
    "n_shared_experts": 1, "num_experts_per_tok": 8, "first_k_dense_replace": 3, "vocab_size": 129280,
    "max_position_embeddings": 163840, "tie_word_embeddings": False,
    "quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8",
                            "weight_block_size": [128, 128]},
}


def llama_tensors(config: dict[str, Any], dtype: str = "BF16") -> dict[str, tuple[str, list[int]]]:
    """The tensors of a Llama-style checkpoint (transformers' LlamaForCausalLM / Qwen2 / Mistral / Mixtral names
    and shapes): name -> (dtype, shape)."""
    hidden, inter, vocab = config["hidden_size"], config["intermediate_size"], config["vocab_size"]
    heads, kv_heads = config["num_attention_heads"], config["num_key_value_heads"]
    head_dim = config.get("head_dim") or hidden // heads
    bias = config["model_type"] == "qwen2"  # Qwen2 has q/k/v biases
    experts = config.get("num_local_experts")
    tensors: dict[str, tuple[str, list[int]]] = {"model.embed_tokens.weight": (dtype, [vocab, hidden]),
                                                 "model.norm.weight": (dtype, [hidden])}
    if not config.get("tie_word_embeddings"):
        tensors["lm_head.weight"] = (dtype, [vocab, hidden])
    for layer in range(config["num_hidden_layers"]):
        p = f"model.layers.{layer}."
        tensors[p + "input_layernorm.weight"] = (dtype, [hidden])
        tensors[p + "post_attention_layernorm.weight"] = (dtype, [hidden])
        for name, rows in (("q", heads * head_dim), ("k", kv_heads * head_dim), ("v", kv_heads * head_dim)):
            tensors[p + f"self_attn.{name}_proj.weight"] = (dtype, [rows, hidden])
            if bias:
                tensors[p + f"self_attn.{name}_proj.bias"] = (dtype, [rows])
        tensors[p + "self_attn.o_proj.weight"] = (dtype, [hidden, heads * head_dim])
        if experts:
            tensors[p + "block_sparse_moe.gate.weight"] = (dtype, [experts, hidden])
            for e in range(experts):
                q = p + f"block_sparse_moe.experts.{e}."
                tensors[q + "w1.weight"] = (dtype, [inter, hidden])
                tensors[q + "w3.weight"] = (dtype, [inter, hidden])
                tensors[q + "w2.weight"] = (dtype, [hidden, inter])
        else:
            tensors[p + "mlp.gate_proj.weight"] = (dtype, [inter, hidden])
            tensors[p + "mlp.up_proj.weight"] = (dtype, [inter, hidden])
            tensors[p + "mlp.down_proj.weight"] = (dtype, [hidden, inter])
    return tensors


def parameter_count(tensors: dict[str, tuple[str, list[int]]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for dtype, shape in tensors.values():
        size = 1
        for dim in shape:
            size *= dim
        counts[dtype] = counts.get(dtype, 0) + size
    return counts


_BYTES = {"F32": 4, "BF16": 2, "F16": 2, "F8_E4M3": 1, "I32": 4}


def safetensors_header(tensors: dict[str, tuple[str, list[int]]], metadata: dict[str, str] | None = None) -> bytes:
    """What a .safetensors file starts with: 8 bytes little-endian header length, then the JSON header
    {name: {dtype, shape, data_offsets}} (github.com/huggingface/safetensors, "Format"). The tensor data is not
    served: huggingface_hub reads only the header."""
    header: dict[str, Any] = {"__metadata__": metadata or {"format": "pt"}}
    offset = 0
    for name, (dtype, shape) in tensors.items():
        size = _BYTES[dtype]
        for dim in shape:
            size *= dim
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header, separators=(",", ":")).encode()
    return struct.pack("<Q", len(raw)) + raw


@dataclass
class Repo:
    files: dict[str, bytes] = field(default_factory=dict)
    error: tuple[int, str] | None = None  # (HTTP status, X-Error-Code) for every request to the repo


def single_file_repo(config: dict[str, Any], tensors: dict[str, tuple[str, list[int]]]) -> Repo:
    return Repo({"config.json": json.dumps(config).encode(), "model.safetensors": safetensors_header(tensors)})


def sharded_repo(config: dict[str, Any], tensors: dict[str, tuple[str, list[int]]], shards: int) -> Repo:
    names = list(tensors)
    files = {"config.json": json.dumps(config).encode()}
    weight_map: dict[str, str] = {}
    per = -(-len(names) // shards)
    for index in range(shards):
        filename = f"model-{index + 1:05d}-of-{shards:05d}.safetensors"
        part = {name: tensors[name] for name in names[index * per:(index + 1) * per]}
        files[filename] = safetensors_header(part)
        weight_map.update(dict.fromkeys(part, filename))
    files["model.safetensors.index.json"] = json.dumps({"metadata": {}, "weight_map": weight_map}).encode()
    return Repo(files)


class HubServer:
    """`async with HubServer(repos) as hub:` serves at hub.url; hub.requests lists (method, path) as asked."""

    def __init__(self, repos: dict[str, Repo], delay_s: float = 0.0) -> None:
        self.repos = repos
        self.delay_s = delay_s
        self.requests: list[tuple[str, str]] = []
        self.url = ""
        self._runner: web.AppRunner | None = None

    def asked(self, repo_id: str, filename: str = "config.json") -> int:
        return sum(1 for _, path in self.requests if path.startswith(f"/{repo_id}/") and path.endswith(filename))

    async def __aenter__(self) -> HubServer:
        app = web.Application()
        app.router.add_route("*", "/{org}/{name}/resolve/{revision}/{filename:.+}", self._resolve)
        app.router.add_route("*", "/{tail:.*}", self._other)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _other(self, request: web.Request) -> web.Response:
        self.requests.append((request.method, request.path))
        return web.Response(status=404, headers={"X-Error-Code": "RepoNotFound"})

    async def _resolve(self, request: web.Request) -> web.StreamResponse:
        self.requests.append((request.method, request.path))
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        repo = self.repos.get(f"{request.match_info['org']}/{request.match_info['name']}")
        if repo is None:
            return web.Response(status=404, headers={"X-Error-Code": "RepoNotFound"}, text="Repository not found")
        if repo.error is not None:
            status, code = repo.error
            return web.Response(status=status, headers={"X-Error-Code": code}, text=code)
        body = repo.files.get(request.match_info["filename"])
        if body is None:
            return web.Response(status=404, headers={"X-Error-Code": "EntryNotFound"}, text="Entry not found")
        etag = '"' + hashlib.sha256(body).hexdigest() + '"'
        headers = {"ETag": etag, "X-Repo-Commit": "0" * 40, "Accept-Ranges": "bytes"}
        span = request.headers.get("Range", "")
        status = 200
        if span.startswith("bytes="):
            first, _, last = span[6:].partition("-")
            start, stop = int(first), min(len(body), int(last) + 1 if last else len(body))
            headers["Content-Range"] = f"bytes {start}-{stop - 1}/{len(body)}"
            body, status = body[start:stop], 206
        if request.method == "HEAD":
            headers["Content-Length"] = str(len(body))
            return web.Response(status=status, headers=headers)
        return web.Response(status=status, headers=headers, body=body)


class ThreadedHubServer:
    """A HubServer on a loop of its own thread, for synchronous callers (the CLI runs its own asyncio.run)."""

    def __init__(self, repos: dict[str, Repo]) -> None:
        self.server = HubServer(repos)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    def __enter__(self) -> HubServer:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self.server.__aenter__(), self._loop).result(10)
        return self.server

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self.server.__aexit__(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()
