"""Emit the registry YAML with inline comments (yaml.dump cannot write comments)."""
import json, textwrap

ORDER = ["id", "name", "family", "kind", "hf_id", "hf_ids", "aliases", "params_b", "params_source", "active_params_b",
         "layers", "attention_heads", "kv_heads", "head_dim", "hidden_size", "intermediate_size", "vocab_size",
         "tie_word_embeddings", "context_max", "context_note", "torch_dtype", "sliding_window", "sliding_layers",
         "layer_pattern", "no_kv_layers", "mla", "experts", "vision_params_b", "published_weights", "note", "source"]

def scalar(v):
    if v is None: return "null"
    if v is True: return "true"
    if v is False: return "false"
    if isinstance(v, (int, float)): return repr(v)
    return json.dumps(v, ensure_ascii=False)

def flow(v):
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {flow(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(flow(x) for x in v) + "]"
    return scalar(v)

def wrap_str(key, s, indent=4, width=118):
    q = json.dumps(s, ensure_ascii=False)
    first = " " * indent + f"{key}: "
    cont = " " * (indent + len(key) + 3)
    lines = textwrap.wrap(q, width=width, initial_indent=first, subsequent_indent=cont,
                          break_long_words=False, break_on_hyphens=False)
    return lines

def emit_entry(e, comments):
    out = []
    first = True
    keys = [k for k in ORDER if k in e] + [k for k in e if k not in ORDER]
    for k in keys:
        v = e[k]
        prefix = "  - " if first else "    "
        first = False
        c = comments.get(k)
        if c and len(c) > 60:
            for line in textwrap.wrap(c, 110):
                out.append("    # " + line)
            c = None
        if isinstance(v, str) and k in ("source", "params_source", "note", "context_note", "layer_pattern") and len(v) > 70:
            lines = wrap_str(k, v)
            lines[0] = prefix + lines[0].lstrip()
            out.extend(lines)
        elif isinstance(v, list) and k in ("aliases", "hf_ids") and len(flow(v)) > 90:
            items = [json.dumps(x, ensure_ascii=False) for x in v]
            line = prefix + f"{k}: ["
            cont = " " * (len(line))
            cur = line
            for i, it in enumerate(items):
                piece = it + ("," if i < len(items) - 1 else "]")
                if len(cur) + len(piece) + 1 > 118:
                    out.append(cur.rstrip())
                    cur = cont + piece
                else:
                    cur = cur + ("" if cur.endswith("[") else " ") + piece
            out.append(cur)
        else:
            line = prefix + f"{k}: {flow(v)}"
            if c: line += f"  # {c}"
            out.append(line)
    return out
