from data1 import add, ENTRIES, KERAS, HFCNT
def nl(**kw):
    base = dict(layers=None, attention_heads=None, kv_heads=None, head_dim=None, hidden_size=None, intermediate_size=None,
                vocab_size=None, tie_word_embeddings=None, context_max=None, sliding_window=None, sliding_layers=0, mla=None,
                experts=None, vision_params_b=None, published_weights=None)
    base.update(kw); base.setdefault("active_params_b", base["params_b"]); return base
FLUX = "github:black-forest-labs/flux@802fb47"
FLUXP = "FluxParams(in_channels 64, vec_in_dim 768, context_in_dim 4096, hidden_size 3072, mlp_ratio 4.0, num_heads 24, depth 19, depth_single_blocks 38, axes_dim [16,56,56], qkv_bias True, guidance_embed {})"
add(nl(id="flux.1-dev", name="FLUX.1 [dev] (transformer)", family="flux", kind="diffusion", hf_id="black-forest-labs/FLUX.1-dev", hf_ids=[],
       aliases=["flux", "flux.1", "flux.1 dev", "flux dev", "flux.1-dev", "flux.1 [dev]", "flux1-dev", "flux1 dev", "flux-dev", "flux 1 dev",
                "flux.1dev", "flux1dev", "black-forest-labs/flux.1-dev", "flux.1-dev-transformer", "flux 12b", "flux.1 [dev] 12b"],
       params_b=11.901, params_source=f"arithmetic from {FLUX} src/flux/model.py + modules/layers.py with the flux-dev FluxParams: 11,901,408,320; diffusers 0.42 FluxTransformer2DModel with the same config: 11,901,408,320; card: '12 billion parameter rectified flow transformer'",
       layers=57, attention_heads=24, kv_heads=24, head_dim=128, hidden_size=3072,
       layer_pattern="19 double-stream (MMDiT) blocks + 38 single-stream blocks; joint attention over text+image tokens; no KV cache",
       torch_dtype="bfloat16",
       note="transformer only (guidance-distilled, has a guidance embedder). Text encoders load separately: T5-XXL v1.1 encoder 4.762B (t5-v1.1-xxl-encoder) and CLIP-L text 0.123B (clip-vit-large-patch14-text); the VAE (ae.safetensors) is extra",
       source=(f"config: {FLUX} src/flux/util.py configs['flux-dev'] {FLUXP.format('True')}; model_cards/FLUX.1-dev.md ('a 12 billion parameter rectified flow transformer'); cross_check: code-index excerpt 55607365381 (diffusers transformer/config.json: attention_head_dim 128, 24 heads, num_layers 19, num_single_layers 38, joint_attention_dim 4096; via registry); text encoders: util.py load_t5 (google/t5-v1_1-xxl, max_length 512) and load_clip (openai/clip-vit-large-patch14, max_length 77)")),
    {"layers": "double + single blocks; not a KV-cache layer count", "context_max": "not applicable: token count follows the image resolution (plus 512 T5 tokens)"})
add(nl(id="flux.1-schnell", name="FLUX.1 [schnell] (transformer)", family="flux", kind="diffusion", hf_id="black-forest-labs/FLUX.1-schnell", hf_ids=[],
       aliases=["flux schnell", "flux.1 schnell", "flux.1-schnell", "flux.1 [schnell]", "flux1-schnell", "flux1 schnell", "flux-schnell", "black-forest-labs/flux.1-schnell"],
       params_b=11.891, params_source=f"arithmetic from {FLUX} src/flux/model.py with the flux-schnell FluxParams (no guidance embedder): 11,891,178,560; diffusers FluxTransformer2DModel(guidance_embeds=False): same; card: '12 billion parameter rectified flow transformer'",
       layers=57, attention_heads=24, kv_heads=24, head_dim=128, hidden_size=3072,
       layer_pattern="as FLUX.1 [dev]; 1-4 sampling steps (timestep-distilled)", torch_dtype="bfloat16",
       note="transformer only; same T5-XXL and CLIP-L text encoders and VAE as [dev]",
       source=f"config: {FLUX} src/flux/util.py configs['flux-schnell'] {FLUXP.format('False')}; model_cards/FLUX.1-schnell.md ('12 billion parameter', apache-2.0, 1 to 4 steps)"),
    {"context_max": "not applicable: no KV cache"})
add(nl(id="t5-v1.1-xxl-encoder", name="T5-XXL v1.1 encoder (FLUX / SD3 text encoder)", family="t5", kind="text-encoder", hf_id="google/t5-v1_1-xxl", hf_ids=[],
       aliases=["t5-xxl", "t5 xxl", "t5xxl", "t5-v1_1-xxl", "t5 v1.1 xxl", "google/t5-v1_1-xxl", "t5xxl encoder", "t5-xxl encoder"],
       params_b=4.762, params_source=f"arithmetic 4,762,310,656 for the encoder stack incl. the shared 32128x4096 embedding (the full encoder-decoder, 11,135,332,352, equals keras-hub t5_presets 't5_1.1_xxl' params exactly, which validates the dims)",
       layers=24, attention_heads=64, kv_heads=64, head_dim=64, hidden_size=4096, intermediate_size=10240, vocab_size=32128,
       context_max=512, context_note="FLUX loads it with max_length 512 (util.py load_t5); T5 uses relative position buckets, no fixed limit",
       layer_pattern="24 bidirectional encoder layers, gated-GELU FF; run once per prompt, no KV cache", torch_dtype="bfloat16",
       note="the count covers the encoder only (what FLUX/SD3 load via T5EncoderModel); the decoder of google/t5-v1_1-xxl is not loaded",
       source=(f"config: github:RahulSChand/gpu_poor@ad2fc0e public/all_configs.json['google/t5-v1_1-xxl'] (T5ForConditionalGeneration: d_ff 10240, d_model 4096, num_heads 64, num_layers 24, vocab 32128); d_kv 64 implied by keras-hub {KERAS}/t5/t5_presets.py t5_1.1_xxl params 11135332352 (reproduced exactly with d_kv 64); usage: github:black-forest-labs/flux@802fb47 src/flux/util.py load_t5 HFEmbedder('google/t5-v1_1-xxl', max_length=512, bf16)")),
    {"context_max": "max_length FLUX uses (not a model limit)", "torch_dtype": "as FLUX loads it (torch_dtype=torch.bfloat16)"})
add(nl(id="clip-vit-large-patch14-text", name="CLIP ViT-L/14 text encoder (CLIP-L)", family="clip", kind="text-encoder", hf_id="openai/clip-vit-large-patch14", hf_ids=[],
       aliases=["clip-l", "clip l", "clip_l", "clip-vit-large-patch14", "openai/clip-vit-large-patch14", "clip vit-l/14", "clip-l text encoder"],
       params_b=0.123, params_source="arithmetic 123,060,480 for CLIPTextModel (token + 77 position embeddings, 12 layers, final LN) from the keras-hub CLIP-L text config",
       layers=12, attention_heads=12, kv_heads=12, head_dim=64, hidden_size=768, intermediate_size=3072, vocab_size=49408,
       context_max=77, layer_pattern="12-layer causal text transformer, quick_gelu; run once per prompt, no KV cache",
       note="text tower only (what FLUX/SDXL load); the full CLIP ViT-L/14 checkpoint with the vision tower is 427.6M (keras-hub clip_vit_large_patch14 params 427616770)",
       source=f"config: github:keras-team/keras-hub@71453d08f tools/checkpoint_conversion/convert_stable_diffusion_3_checkpoints.py clip_l = CLIPTextEncoder(49408, 768, 768, 12, 12, 3072, 'quick_gelu', -2); full-model count: {KERAS}/clip/clip_presets.py clip_vit_large_patch14 427616770; usage: github:black-forest-labs/flux@802fb47 src/flux/util.py load_clip HFEmbedder('openai/clip-vit-large-patch14', max_length=77)"),
    {"context_max": "77-token text context"})
add(nl(id="sdxl-base-1.0", name="Stable Diffusion XL base 1.0 (UNet)", family="sdxl", kind="diffusion", hf_id="stabilityai/stable-diffusion-xl-base-1.0", hf_ids=[],
       aliases=["sdxl", "sdxl base", "sdxl 1.0", "sdxl-base-1.0", "sd xl", "stable diffusion xl", "stable-diffusion-xl-base-1.0", "stabilityai/stable-diffusion-xl-base-1.0"],
       params_b=2.567, params_source="sgm UNetModel from github:Stability-AI/generative-models built on the meta device with configs/inference/sd_xl_base.yaml network_config: 2,567,463,684",
       hidden_size=320, layer_pattern="UNet: channel_mult [1,2,4] x 320, transformer_depth [1,2,10] at attention_resolutions [4,2], cross-attention context 2048; no KV cache",
       torch_dtype="float16",
       note="params_b is the UNet only (2.567B). The checkpoint also carries the CLIP ViT-L text encoder 0.123B and the OpenCLIP ViT-bigG text encoder with projection 0.695B (together 0.818B) and the VAE 0.084B (83,653,863): about 3.47B in all",
       source=("config: github:Stability-AI/generative-models configs/inference/sd_xl_base.yaml (UNetModel: adm_in_channels 2816, model_channels 320, attention_resolutions [4,2], num_res_blocks 2, channel_mult [1,2,4], num_head_channels 64, use_linear_in_transformer, transformer_depth [1,2,10], context_dim 2048; conditioner FrozenCLIPEmbedder layer_idx 11 + FrozenOpenCLIPEmbedder2 ViT-bigG-14; first_stage AutoencoderKL ch 128, ch_mult [1,2,4,4], z_channels 4); "
               "params: UNet and VAE counted with that repo's sgm modules (torch meta device); text encoders by arithmetic from keras-hub convert_stable_diffusion_3_checkpoints.py CLIPTextEncoder configs (clip_l 768/12 layers: 123,060,480; clip_g 1280/32 layers + 1280x1280 projection: 694,659,840)")),
    {"hidden_size": "base channel width (model_channels), not a transformer hidden size", "context_max": "not applicable: two 77-token text encoders"})
WH = "github:openai/whisper@c0d2f62"
def whisper(id_, name, hf, aliases, p, psrc, dec_layers, H, heads, mels, vocab, enc_layers, src, note):
    return nl(id=id_, name=name, family="whisper", kind="speech", hf_id=hf, hf_ids=[], aliases=aliases, params_b=p, params_source=psrc,
              layers=dec_layers, attention_heads=heads, kv_heads=heads, head_dim=64, hidden_size=H, intermediate_size=4 * H,
              vocab_size=vocab, tie_word_embeddings=True, context_max=448,
              context_note="decoder max_target_positions 448 tokens; encoder fixed 1500 frames (30 s audio)",
              layer_pattern=f"encoder-decoder: {enc_layers} encoder layers (1500 audio positions, {mels} mel bins) + {dec_layers} decoder layers with self- and cross-attention",
              torch_dtype="float16", note=note, source=src)
WARITH = f"arithmetic from {WH} whisper/model.py (AudioEncoder conv1/conv2 + blocks + ln_post; TextDecoder token + positional embedding + blocks with cross-attention + ln; output tied to token_embedding) plus the 1500 x d_model encoder positional table that HF checkpoints store"
add(whisper("whisper-large-v3", "Whisper large-v3", "openai/whisper-large-v3",
            ["whisper large-v3", "whisper-large-v3", "whisper large v3", "whisper-large", "whisper large", "large-v3", "openai/whisper-large-v3", "whisper v3"],
            1.543, f"{WARITH}: 1,543,490,560; README table 'large | 1550 M'", 32, 1280, 20, 128, 51866, 32,
            f"config: code-index excerpt 9937374558 (printed openai/whisper-large-v3 config: decoder_layers 32, encoder_layers 32, 20 heads, encoder_ffn_dim 5120, max_source_positions 1500, max_target_positions 448, num_mel_bins 128, vocab 51866, fp16); d_model 1280: code-index excerpt 60806362937; params: {WARITH}; {WH} README.md parameter table",
            "KV cache: decoder self-attention over <= 448 text tokens plus cross-attention K/V of the 1500 encoder frames per layer (fixed per 30 s chunk)"),
    {"layers": "decoder layers (where the KV cache lives); encoder layers in layer_pattern", "tie_word_embeddings": "Whisper reuses token_embedding for the logits"})
add(whisper("whisper-large-v3-turbo", "Whisper large-v3-turbo", "openai/whisper-large-v3-turbo",
            ["whisper turbo", "whisper-turbo", "whisper large-v3-turbo", "whisper-large-v3-turbo", "large-v3-turbo", "turbo", "openai/whisper-large-v3-turbo"],
            0.809, f"{WARITH}: 808,878,080; README table 'turbo | 809 M' (model-card.md says 798 M)", 4, 1280, 20, 128, 51866, 32,
            f"config: code-index excerpt 57879293554 (test ParseConfig_LargeV3Turbo: num_mel_bins 128, d_model 1280, decoder_layers 4, encoder_layers 32); vocab/heads as large-v3 (it is large-v3 with the decoder cut from 32 to 4 layers); params: {WARITH}; {WH} README.md ('turbo | 809 M') vs model-card.md ('turbo | 798 M')",
            "same 32-layer encoder as large-v3, 4-layer decoder"),
    {"params_b": "the two openai/whisper docs disagree (809 M README, 798 M model-card.md); arithmetic gives 808.9M", "vocab_size": "as large-v3 (not in the turbo snippet read)"})
add(whisper("whisper-medium", "Whisper medium", "openai/whisper-medium",
            ["whisper medium", "whisper-medium", "medium", "openai/whisper-medium", "whisper medium multilingual"],
            0.764, f"{WARITH}: 763,857,920 = keras-hub whisper_presets whisper_medium_multi params 763857920 exactly; README table 'medium | 769 M'", 24, 1024, 16, 80, 51865, 24,
            f"dims (80 mels, d_model 1024, 24+24 layers, 16 heads, vocab 51865) reproduce keras-hub {KERAS}/whisper/whisper_presets.py whisper_medium_multi 763857920 exactly with the model.py arithmetic; {WH} README.md ('medium | 769 M'); English-only medium.en has vocab 51864",
            "multilingual medium; medium.en differs only in vocab"),
    {"layers": "decoder layers", "attention_heads": "dims validated by the exact keras-hub count, not read from a config"})
