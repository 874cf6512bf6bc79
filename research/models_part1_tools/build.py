import sys, yaml, collections
import os; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import data1, data2, data3, data4, data5, data6
from data1 import ENTRIES
from emit import emit_entry
# fixups
for e, c in ENTRIES:
    if e["id"] == "magistral-small":
        e["hf_ids"] = ["mistralai/Magistral-Small-2506"]; c.pop("hf_ids", None)
    if e["id"] == "phi-3-small-8k":
        e["aliases"] = [a for a in e["aliases"] if a != "phi3:7b"]
    DT = {"codellama-70b", "llama-guard-3-8b", "mistral-small-24b", "mistral-large-2", "codestral-22b", "devstral-small",
          "magistral-small", "gemma-3-270m", "gemma-3-1b", "gemma-3-4b", "gemma-3-12b", "phi-4-reasoning", "falcon-7b",
          "falcon-40b", "granite-3.3-8b", "llama-3.2-90b-vision", "llama-3-8b", "llama-3-70b"}
    if e["id"] in DT:
        e["torch_dtype"] = None
        c["torch_dtype"] = "UNVERIFIED: dtype not in the config copies read"
    if e["id"] == "falcon3-10b":
        c["torch_dtype"] = "from the official Falcon3-7B config; the 10B copy read is an fp16 fine-tune"
    if e["id"] == "mistral-small-2409":
        e["torch_dtype"] = None
    if e["id"] in ("sdxl-base-1.0", "flux.1-dev", "flux.1-schnell", "whisper-large-v3-turbo", "whisper-medium"):
        e["torch_dtype"] = None; c["torch_dtype"] = "UNVERIFIED: checkpoint dtype not read"
    if e.get("kind") in ("diffusion", "text-encoder", "speech"):
        for k in ("layers", "attention_heads", "kv_heads", "head_dim", "hidden_size", "intermediate_size", "vocab_size", "tie_word_embeddings", "context_max"):
            if k in e and e[k] is None and k not in c:
                c[k] = "not applicable: " + ("convolutional UNet, no attention KV cache" if e["id"].startswith("sdxl") else "diffusion transformer, no KV cache" if e["id"].startswith("flux") else "n/a")
    for k in list(c):
        if c[k] is None: del c[k]
    e["aliases"] = list(dict.fromkeys(a for a in e["aliases"] if a and a not in ("turbo", "medium", "large-v3")))
HEADER = """# Cardfit model registry - research part 1 (Meta, Mistral, Google, Microsoft, Cohere, Falcon, Yi, OLMo 2, Granite,
# FLUX / T5 / CLIP / SDXL / Whisper). Schema: /work/helpers/MODEL_SCHEMA.md.
#
# Every number was read in a source named in `source:` (config.json copies in the docs / code corpora, repos fetched
# with the search tool, model cards) or derived from read config values by arithmetic that is named as such.
# Conventions
#   params_b          exact total in billions (3 decimals). "config arithmetic" = embeddings + attention + MLP + norms,
#                     the head counted once if tied; the same formula reproduces the keras-hub exact counts for
#                     Llama-2-7B, Llama-3-8B, Mistral-7B v0.1/v0.3, Phi-3-mini, Mixtral-8x7B, Magistral-Small, Gemma-3 1B/270M.
#                     "transformers count" = the model class of transformers 5.24 (diffusers 0.42 / sgm for FLUX, SDXL)
#                     built on the meta device from the read config values and its parameters summed; no weights loaded.
#   VLMs              params_b = whole checkpoint; layers/heads describe the language model; vision_params_b = vision
#                     tower + projector.
#   sliding_window    tokens a layer's KV cache is capped at (Llama 4: attention_chunk_size of chunked layers);
#                     sliding_layers = how many of `layers` use it.
#   no_kv_layers      layers that keep no per-text-token KV (Llama 3.2 Vision cross-attention layers).
#   null + "# UNVERIFIED: ..." = not found in any source read; null + other comment = not applicable.
#   mla / experts / published_weights / sliding_window / vision_params_b: null without a comment = verified absent
#                     (dense model, no capping window, no vision tower, released in bf16/fp16).
#   aliases           lower-case names people type, incl. Ollama tags as commonly published (tags not re-verified
#                     against the Ollama library in this pass).
#   "code-index excerpt N" = a file of the public-code index whose repository/path the index does not report;
#   "docs corpus <url>" = a Hugging Face page (config.json blob, commit or tree listing) read via the search tool.
schema_version: 1
models:
"""
lines = [HEADER.rstrip("\n")]
groups = collections.OrderedDict()
for e, c in ENTRIES:
    lines.append("")
    lines.extend(emit_entry(e, c))
text = "\n".join(lines) + "\n"
open('/work/research/models_part1.yaml', 'w').write(text)
d = yaml.safe_load(open('/work/research/models_part1.yaml'))
ms = d["models"]
print("entries", len(ms))
ids = [m["id"] for m in ms]
assert len(ids) == len(set(ids)), [i for i in ids if ids.count(i) > 1]
for m in ms:
    for k in ("id", "name", "params_b", "source"):
        assert k in m, (m["id"], k)
# alias collisions
seen = {}
for m in ms:
    for a in m.get("aliases", []):
        if a in seen and seen[a] != m["id"]:
            print("ALIAS COLLISION", a, seen[a], m["id"])
        seen[a] = m["id"]
print("null params_b:", [m["id"] for m in ms if m["params_b"] is None])
