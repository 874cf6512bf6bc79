import yaml
from derive_repos import ckpt_bytes
from derive_gguf_bpw import size
from build_formats import M
from published_gguf import PUB
def dv(mid, fmt, F=None):
    return round(ckpt_bytes(mid, fmt, F, qkv_bias=mid.startswith('qwen2.5'), qk_norm=mid.startswith('qwen3'))/1e9, 2)
LAY = {'awq': 'AutoAWQ awq/modules/linear/gemm.py @88e4c76 (qweight in x out/8 int32, qzeros in/128 x out/8 int32, scales in/128 x out fp16)',
       'gptq4': 'vLLM gptq.py layout (qweight in/8 x out int32, qzeros in/128 x out/8 int32, scales in/128 x out fp16, g_idx in int32)',
       'gptq8': 'vLLM gptq.py layout with pack_factor 4 (qzeros in/128 x out/4, scales fp16, g_idx)',
       'fp8_block': 'FP8 E4M3 weights + one fp32 scale per 128x128 block (weight_block_size [128,128] per /work/shared/reference/models.yaml); routers, embeddings, lm_head, norms bf16',
       'fp8_channel': 'FP8 E4M3 weights + one fp32 scale per output channel; lm_head, embeddings, norms bf16',
       'fp8_tensor': 'FP8 E4M3 weights + per-tensor weight/input scales; lm_head, embeddings, norms bf16',
       'w4a16': 'compressed-tensors pack-quantized W4A16 preset (symmetric, group 128: weight_packed int32 + weight_scale bf16, no zero point) @52792be',
       'nf4_dq': 'bitsandbytes NF4 blocksize 64 + double quant (uint8 absmax, fp32 absmax2 per 256 blocks) functional.py @95f9af3; lm_head/embeddings/norms 16-bit'}
R = []
def add(hf, base, quant, gb, kind, source, derived=None, note=None):
    e = {'hf_id': hf, 'base': base, 'quant': quant, 'gb': gb, 'gb_kind': kind}
    if derived is not None: e['gb_derived'] = derived
    e['source'] = source
    if note: e['note'] = note
    R.append(e)
CFG = 'config fields from /work/shared/reference/models.yaml'
# ---- Qwen2.5 AWQ / GPTQ ----
add('Qwen/Qwen2.5-7B-Instruct-AWQ','qwen2.5-7b','awq',5.57,'published',
    'HF blob pages Qwen/Qwen2.5-7B-Instruct-AWQ@73f22df: model-00001-of-00002 4 GB + model-00002-of-00002 1.57 GB', dv('qwen2.5-7b','awq'))
add('Qwen/Qwen2.5-14B-Instruct-AWQ','qwen2.5-14b','awq',dv('qwen2.5-14b','awq'),'derived', f"{LAY['awq']}; {CFG}; intermediate 13824 assumed unpadded (not read)")
add('Qwen/Qwen2.5-32B-Instruct-AWQ','qwen2.5-32b','awq',dv('qwen2.5-32b','awq'),'derived', f"{LAY['awq']}; {CFG}")
add('Qwen/Qwen2.5-72B-Instruct-AWQ','qwen2.5-72b','awq',41.6,'published',
    'Kaggle mirror qwen-lm/qwen2.5/Transformers/72b-instruct-awq size 41,607,438,677 B incl. ~11.5 MB tokenizer files (quoted in a public GitHub test fixture, code-index id 60413565848); HF shard pages Qwen/Qwen2.5-72B-Instruct-AWQ: shards 1-10 = 39.08 GB',
    dv('qwen2.5-72b','awq',29696),
    'matches the layout only with intermediate_size padded 29568 -> 29696 (41.60 GB; unpadded would be 41.46 GB): the official quantized 72B checkpoints appear padded for group-128 tensor parallelism')
for q in ('gptq4','gptq8'):
    tag = 'GPTQ-Int4' if q=='gptq4' else 'GPTQ-Int8'
    for mid, size_b in (('qwen2.5-7b','7B'),('qwen2.5-14b','14B'),('qwen2.5-32b','32B'),('qwen2.5-72b','72B')):
        F = 29696 if mid=='qwen2.5-72b' else None
        note = None
        if mid=='qwen2.5-72b':
            note = 'assumes the same 29696 padding as the AWQ repo' + ('; cross-check: Qwen2-72B-Instruct-GPTQ-Int4 (same shapes) shards sum to 41.65 GB (psyche/ and Enfint/ copies of Qwen/Qwen2-72B-Instruct-GPTQ-Int4)' if q=='gptq4' else '')
        add(f'Qwen/Qwen2.5-{size_b}-Instruct-{tag}', mid, 'gptq' if q=='gptq4' else 'gptq_int8', dv(mid,q,F), 'derived', f"{LAY[q]}; {CFG}", note=note)
# ---- Qwen3 ----
for mid, hf in (('qwen3-8b','Qwen/Qwen3-8B-FP8'),('qwen3-32b','Qwen/Qwen3-32B-FP8'),('qwen3-30b-a3b','Qwen/Qwen3-30B-A3B-FP8'),('qwen3-235b-a22b','Qwen/Qwen3-235B-A22B-FP8')):
    add(hf, mid, 'fp8_block', dv(mid,'fp8_block'), 'derived', f"{LAY['fp8_block']}; {CFG} (published_quantization field names this repo)")
add('Qwen/Qwen3-14B-FP8','qwen3-14b','fp8_block',None,'not_derived','qwen3-14b is not in /work/shared/reference/models.yaml; no config read')
for mid, hf in (('qwen3-8b','Qwen/Qwen3-8B-AWQ'),('qwen3-32b','Qwen/Qwen3-32B-AWQ')):
    add(hf, mid, 'awq', dv(mid,'awq'), 'derived', f"{LAY['awq']}; {CFG}", note='repo existence not verified in this session')
# ---- Llama 3.1 ----
add('meta-llama/Llama-3.1-405B-Instruct-FP8','llama-3.1-405b','fp8_channel',dv('llama-3.1-405b','fp8_channel'),'derived',
    f"{LAY['fp8_channel']} (fbgemm_fp8 = per-channel weights, transformers docs quantization/fbgemm_fp8); {CFG}",
    note="assumes every decoder linear is FP8. Meta's config lists modules_to_not_convert (vLLM fbgemm_fp8.py reads it) which was NOT read here; the base Llama-3.1-405B-FP8 repo has 109 shards (PR #15 file list). Cross-check: amd/Meta-Llama-3.1-405B-Instruct-fp8-quark-vllm (all-linear FP8) is 410 GB on its tree page")
add('RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8','llama-3.1-8b','fp8',dv('llama-3.1-8b','fp8_tensor'),'derived',
    f"{LAY['fp8_tensor']}; {CFG}", note='cross-check: neuralmagic/Meta-Llama-3-8B-Instruct-FP8 (same tensor shapes) shards 5 GB + 4.08 GB = 9.08 GB; FriendliAI/Meta-Llama-3.1-8B-Instruct-fp8 model.safetensors 9.08 GB')
add('RedHatAI/Meta-Llama-3.1-70B-Instruct-FP8','llama-3.1-70b','fp8',dv('llama-3.1-70b','fp8_tensor'),'derived', f"{LAY['fp8_tensor']}; {CFG}")
add('RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w4a16','llama-3.1-8b','w4a16',dv('llama-3.1-8b','w4a16'),'derived', f"{LAY['w4a16']}; {CFG}")
add('RedHatAI/Meta-Llama-3.1-70B-Instruct-quantized.w4a16','llama-3.1-70b','w4a16',dv('llama-3.1-70b','w4a16'),'derived', f"{LAY['w4a16']}; {CFG}")
add('hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4','llama-3.1-8b','awq',dv('llama-3.1-8b','awq'),'derived', f"{LAY['awq']}; {CFG}")
add('hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4','llama-3.1-70b','awq',39.77,'published',
    'HF tree hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4@db9578a/@cdc64fd: 4.97 + 6 x 4.89 + 3.36 + 2.1 GB', dv('llama-3.1-70b','awq'))
add('hugging-quants/Meta-Llama-3.1-405B-Instruct-AWQ-INT4','llama-3.1-405b','awq',dv('llama-3.1-405b','awq'),'derived', f"{LAY['awq']}; {CFG}")
for mid, sz in (('llama-3.1-8b','8B'),('llama-3.1-70b','70B'),('llama-3.1-405b','405B')):
    add(f'hugging-quants/Meta-Llama-3.1-{sz}-Instruct-GPTQ-INT4', mid, 'gptq', dv(mid,'gptq4'), 'derived', f"{LAY['gptq4']}; {CFG}")
add('unsloth/Meta-Llama-3.1-8B-Instruct-bnb-4bit','llama-3.1-8b','bnb_nf4',dv('llama-3.1-8b','nf4_dq'),'derived',
    f"{LAY['nf4_dq']}; {CFG}; quantization_config nf4 + bnb_4bit_use_double_quant true as copied into fine-tunes of this repo (e.g. kazalbrur/Bangla-Med-Llama-3.1-8B-Instructed-bnb-4bit commit a37a915)")
add('unsloth/Meta-Llama-3.1-70B-Instruct-bnb-4bit','llama-3.1-70b','bnb_nf4',dv('llama-3.1-70b','nf4_dq'),'derived', f"{LAY['nf4_dq']}; {CFG}")
# ---- MoE natives ----
add('openai/gpt-oss-20b','gpt-oss-20b','mxfp4',13.76,'published',
    'HF tree openai/gpt-oss-20b@main: model-00000..00002 = 4.79 + 4.8 + 4.17 GB (the repo total 41.3 GB also counts original/ and metal/ copies)', 13.76,
    'derived = experts 4.25 bpw MXFP4 + attention/router/embeddings/lm_head/biases bf16 from reference config; file bpw 5.26 over 20.9B')
add('openai/gpt-oss-120b','gpt-oss-120b','mxfp4',65.3,'published',
    'HF tree the-qa-company/gpt-oss-120b@main (root checkpoint copy) 65.3 GB; openai/gpt-oss-120b tree original/ 65.2 GB (repo total 196 GB = root + original/ + metal/)', 65.25,
    'file bpw 4.47 over 116.8B')
add('deepseek-ai/DeepSeek-V3','deepseek-v3','fp8_block',689.0,'derived',
    'deepseek-ai/DeepSeek-V3 README (@9b4e978): "total size ... on Hugging Face is 685B" params = 671B main + 14B MTP; README_WEIGHTS.md: FP8 e4m3 128x128 block scales, embedding 0.9B + head 0.9B; derived = (685B - 4 x 0.93B embed/head copies) x (1 + 4/16384) B + 3.7B x 2 B',
    note='~1% uncertainty; unsloth blog calls the original "720GB". VRAM for inference without MTP ~ 671B-based: ~673 GB')
add('deepseek-ai/DeepSeek-R1','deepseek-r1','fp8_block',689.0,'derived','same architecture and FP8 format as DeepSeek-V3 (reference models.yaml)', note='see DeepSeek-V3')
add('moonshotai/Kimi-K2-Instruct','kimi-k2','fp8_block',None,'estimate',
    'MoonshotAI/Kimi-K2 README @c6157be: 1T total / 32B active params, "checkpoints are stored in block-fp8 format"; deploy guidance: smallest unit 16 x H200/H20',
    note='estimate ~1,000-1,030 GB (1T params x ~1 B + bf16 embeddings); no config or file list read; kimi-k2 not in reference models.yaml')
# ---- unsloth R1 dynamic GGUF ----
for q, gb, mix in (('ud-iq1_s',131,'1.58-bit'),('ud-iq1_m',158,'1.73-bit'),('ud-iq2_xxs',183,'2.22-bit'),('ud-q2_k_xl',212,'2.51-bit')):
    add(f'unsloth/DeepSeek-R1-GGUF:{q.upper().replace("UD-","UD-")}', 'deepseek-r1', f'gguf_{q}', gb, 'published',
        'unsloth.ai/blog/deepseekr1-dynamic (Jan 27 2025) table "MoE Bits / Disk Size": ' + f'{mix} {gb}GB', note=f'{mix} = bits of the MoE expert weights; file-level {gb*8/671.026:.2f} bpw over 671.0B')
# ---- GGUF repos ----
REPO = {'llama-3.1-8b': ('bartowski/Meta-Llama-3.1-8B-Instruct-GGUF','Meta-Llama-3.1-8B-Instruct'),
        'llama-3.1-70b': ('bartowski/Meta-Llama-3.1-70B-Instruct-GGUF','Meta-Llama-3.1-70B-Instruct'),
        'qwen2.5-7b': ('second-state/Qwen2.5-7B-Instruct-GGUF','Qwen2.5-7B-Instruct'),
        'qwen2.5-32b': ('bartowski/Qwen2.5-32B-Instruct-GGUF','Qwen2.5-32B-Instruct'),
        'qwen2.5-72b': ('mradermacher/Qwen2.5-72B-Instruct-GGUF','Qwen2.5-72B-Instruct'),
        'mistral-7b-v0.3': ('bartowski/Mistral-7B-Instruct-v0.3-GGUF','Mistral-7B-Instruct-v0.3'),
        'gemma-2-9b': ('bartowski/gemma-2-9b-it-GGUF','gemma-2-9b-it')}
from published_gguf import SRC
WANT = ['Q2_K','Q3_K_M','IQ4_XS','Q4_K_M','Q5_K_M','Q6_K','Q8_0']
for mid, (repo, stem) in REPO.items():
    for ft in WANT:
        pub = PUB[mid].get(ft)
        pred = round(size(M(mid), ft)['bytes']/1e9, 2)
        OVR = {('llama-3.1-8b','Q3_K_M'): ('second-state/Meta-Llama-3.1-8B-GGUF', 'Meta-Llama-3.1-8B-Q3_K_M.gguf'),
               ('mistral-7b-v0.3','Q3_K_M'): ('mradermacher/Mistral-7B-Instruct-v0.3-GGUF', 'Mistral-7B-Instruct-v0.3.Q3_K_M.gguf'),
               ('qwen2.5-72b','Q2_K'): ('second-state/Qwen2.5-72B-Instruct-GGUF', 'Qwen2.5-72B-Instruct-Q2_K.gguf'),
               ('qwen2.5-72b','Q3_K_M'): ('second-state/Qwen2.5-72B-Instruct-GGUF', 'Qwen2.5-72B-Instruct-Q3_K_M.gguf')}
        r2, fname = OVR.get((mid, ft), (repo, f'{stem}-{ft}.gguf' if mid != 'qwen2.5-72b' else f'{stem}.{ft}.gguf'))
        if pub is not None:
            add(f'{r2}:{fname}', mid, f'gguf_{ft.lower()}', pub, 'published', SRC[mid], pred)
        else:
            add(f'{r2}:{fname}', mid, f'gguf_{ft.lower()}', pred, 'derived', 'derive_gguf_bpw.py (llama-quant.cpp rules @007dbbf3, ggml-common.h blocks) on the reference config; file size not read')
hdr = ("# Published quantized checkpoints and their size (decimal GB = 1e9 bytes).\n"
       "# gb_kind: published = read from the page in `source` (HF shows 3 significant digits); derived = computed from the tensor\n"
       "#   layout in formats.yaml and the verified config in /work/shared/reference/models.yaml (scripts in /work/research/*.py);\n"
       "#   where both exist, gb_derived shows the agreement. estimate / not_derived = no reliable number, Cardfit should fall back.\n"
       "# GGUF entries are one row per file: hf_id = <repo>:<file>.\n")
open('quantized_repos.yaml','w').write(hdr + yaml.safe_dump(R, sort_keys=False, width=200, allow_unicode=True))
print(len(R))
