"""`cardfit models draft REPO [--from-dir DIR]`: a Hub repository's config.json and weight files, read from a local
copy or the Hugging Face Hub, drafted into a registry entry for review (engine/models/draft.py writes it).

The Hub is read as the bot's lookup reads it (bot/features/hub_lookup.py: config.json over HTTP, the safetensors
headers through huggingface_hub's `get_safetensors_metadata`, HF_ENDPOINT and HF_HUB_OFFLINE honoured); a local
copy is read from disk: config.json, model.safetensors.index.json and the header of every .safetensors file there
(only the header: a copy without the weights themselves, as `hf download --include "*.json"` leaves it, drafts
from the index).
"""
from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

from engine.models.draft import WeightCount, count_from_index, count_tensors

MAX_HEADER_BYTES = 100_000_000  # safetensors' own limit on a header (safetensors/src/tensor.rs MAX_HEADER_SIZE)


class DraftError(Exception):
    """What keeps a repository from being drafted (said to the maintainer as it is)."""


def read_directory(directory: Path) -> tuple[dict[str, Any], WeightCount, str]:
    """(config.json, the parameters, which files were read) of a local copy of a repository."""
    config = _json(directory / "config.json")
    shards = sorted(directory.glob("*.safetensors"))
    if shards:
        tensors: dict[str, tuple[str, int]] = {}
        for shard in shards:
            tensors.update(safetensors_tensors(shard))
        noun = "file" if len(shards) == 1 else "files"
        return config, count_tensors(tensors, f"safetensors headers of {len(shards)} {noun}"), \
            "config.json, " + ", ".join(shard.name for shard in shards[:2]) + (" ..." if len(shards) > 2 else "")
    index_path = directory / "model.safetensors.index.json"
    if not index_path.is_file():
        raise DraftError(f"{directory}: neither .safetensors files nor model.safetensors.index.json")
    weights = count_from_index(_json(index_path), config)
    if weights is None:
        raise DraftError(f"{index_path}: no total_parameters, and no total_size with an unquantized torch_dtype")
    return config, weights, "config.json, model.safetensors.index.json"


def read_hub(repo_id: str, timeout_s: float) -> tuple[dict[str, Any], WeightCount, str]:
    """(config.json, the parameters, which files were read) of a repository on the Hub (blocking)."""
    from huggingface_hub import HfApi, get_session, hf_hub_url, hf_raise_for_status
    from huggingface_hub.errors import HfHubHTTPError

    from bot.features.hub_lookup import REPO_ID_RE, hub_endpoint, hub_offline

    if REPO_ID_RE.fullmatch(repo_id) is None:
        raise DraftError(f"{repo_id!r} is no Hugging Face repository id (org/name)")
    if hub_offline():
        raise DraftError("HF_HUB_OFFLINE is set: use --from-dir with a local copy")
    endpoint = hub_endpoint()
    try:
        response = get_session().get(hf_hub_url(repo_id, "config.json", endpoint=endpoint), timeout=timeout_s,
                                     follow_redirects=True)
        hf_raise_for_status(response)
        config = response.json()
        metadata = HfApi(endpoint=endpoint).get_safetensors_metadata(repo_id, timeout=timeout_s)
    except (HfHubHTTPError, ValueError, OSError) as error:
        raise DraftError(f"{repo_id}: the Hub did not give config.json and safetensors headers ({error})") from error
    if not isinstance(config, dict):
        raise DraftError(f"{repo_id}: config.json is no JSON object")
    tensors = {name: (info.dtype, info.parameter_count)
               for file in metadata.files_metadata.values() for name, info in file.tensors.items()}
    files = len(metadata.files_metadata)
    return config, count_tensors(tensors, f"safetensors headers of {files} file{'s' if files != 1 else ''}"), \
        "config.json, " + ("model.safetensors.index.json and the shards' headers" if metadata.sharded
                           else "model.safetensors header")


def safetensors_tensors(path: Path) -> dict[str, tuple[str, int]]:
    """Tensor name -> (dtype, elements) from a .safetensors file's header (8 bytes little-endian length, then
    the JSON header; github.com/huggingface/safetensors "Format")."""
    with path.open("rb") as handle:
        raw_length = handle.read(8)
        if len(raw_length) != 8:
            raise DraftError(f"{path}: no safetensors header")
        (length,) = struct.unpack("<Q", raw_length)
        if length > MAX_HEADER_BYTES:
            raise DraftError(f"{path}: a header of {length:,} bytes is no safetensors header")
        try:
            header = json.loads(handle.read(length))
        except ValueError as error:
            raise DraftError(f"{path}: the header is no JSON ({error})") from error
    tensors: dict[str, tuple[str, int]] = {}
    for name, info in header.items():
        if name == "__metadata__" or not isinstance(info, dict):
            continue
        elements = 1
        for dim in info.get("shape") or ():
            elements *= int(dim)
        tensors[name] = (str(info.get("dtype")), elements)
    return tensors


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as error:
        raise DraftError(f"{path}: not found") from error
    except ValueError as error:
        raise DraftError(f"{path}: no JSON ({error})") from error
    if not isinstance(data, dict):
        raise DraftError(f"{path}: no JSON object")
    return data
