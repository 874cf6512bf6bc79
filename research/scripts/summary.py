import yaml, statistics as st
from derive_gguf_bpw import size
ref = {x['id']: x for x in yaml.safe_load(open('/work/shared/reference/models.yaml'))['models']}
models = {'llama-3.1-8b':{}, 'llama-3.1-70b':{'llm_type_70b':True}, 'mistral-7b-v0.3':{}, 'qwen2.5-7b':{'qkv_bias':True},
          'qwen2.5-14b':{'qkv_bias':True}, 'qwen2.5-32b':{'qkv_bias':True}, 'qwen2.5-72b':{'qkv_bias':True,'llm_type_70b':True},
          'gemma-2-9b':{'norms_per_layer':4}}
fts = ['Q2_K','Q2_K_S','Q3_K_S','Q3_K_M','Q3_K_L','Q4_0','Q4_1','Q4_K_S','Q4_K_M','Q5_0','Q5_1','Q5_K_S','Q5_K_M','Q6_K','Q8_0',
       'IQ1_S','IQ1_M','IQ2_XXS','IQ2_XS','IQ2_S','IQ2_M','IQ3_XXS','IQ3_XS','IQ3_S','IQ3_M','IQ4_XS','IQ4_NL','F16']
print('ftype   ' + ' '.join(f'{k[:11]:>11s}' for k in models) + '   body(no72b) min-max  emb out')
for ft in fts:
    row=[]; bodies=[]
    for mid, ex in models.items():
        m=dict(ref[mid]); m.update(ex)
        r=size(m, ft, imatrix=True)
        row.append(f"{r['body_bpw']:5.3f}/{r['file_bpw']:5.3f}")
        if mid!='qwen2.5-72b': bodies.append(r['body_bpw'])
        if mid=='llama-3.1-8b': eo=(r['emb'],r['out'])
    print(f'{ft:8s}'+' '.join(f'{x:>11s}' for x in row)+f'   {min(bodies):.3f}-{max(bodies):.3f} mean {st.mean(bodies):.3f}  {eo}')
