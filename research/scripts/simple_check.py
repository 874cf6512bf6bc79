"""Check the table-driven estimate (mean body bpw + embedding/output bits) against every published size used."""
import yaml, statistics as st, re
import derive_gguf_bpw as d
from derive_gguf_bpw import size, bpw
ref = {x['id']: x for x in yaml.safe_load(open('/work/shared/reference/models.yaml'))['models']}
ex = {'llama-3.1-8b':{}, 'llama-3.1-70b':{'llm_type_70b':True}, 'mistral-7b-v0.3':{}, 'qwen2.5-7b':{'qkv_bias':True},
      'qwen2.5-32b':{'qkv_bias':True}, 'qwen2.5-72b':{'qkv_bias':True,'llm_type_70b':True}, 'gemma-2-9b':{'norms_per_layer':4}}
src = open('compare_models.py').read()
pub = {}
for name, mid in [('l70','llama-3.1-70b'),('l8','llama-3.1-8b'),('q72','qwen2.5-72b'),('q7','qwen2.5-7b'),('q32','qwen2.5-32b'),('mis','mistral-7b-v0.3'),('gem','gemma-2-9b')]:
    m = re.search(name + r" = (\{.*?\})", src, re.S); pub[mid] = eval(m.group(1))
# table: mean body bpw over the 6 models without the ffn fallback
table = {}
for ft in set(k for v in pub.values() for k in v):
    bodies = []
    for mid, e in ex.items():
        if mid == 'qwen2.5-72b': continue
        mm = dict(ref[mid]); mm.update(e); bodies.append(size(mm, ft)['body_bpw'])
    table[ft] = st.mean(bodies)
errs = []
for mid, p in pub.items():
    mm = dict(ref[mid]); mm.update(ex[mid])
    ts, n1d = d.tensors(mm)
    emb_n = mm['vocab_size'] * mm['hidden_size']; tied = mm['tie_word_embeddings']
    body_n = sum(c*r for _,_,_,c,r in ts) - emb_n*(1 if tied else 2)
    for ft, gb in p.items():
        r = size(mm, ft)
        eb = bpw(r['emb']); ob = bpw(r['out']) if r['out'] else 0
        est = (body_n*table[ft] + emb_n*eb + (0 if tied else emb_n*ob) + n1d*32)/8/1e9
        e = 100*(est-gb)/gb; errs.append((abs(e), mid, ft, round(e,2)))
errs.sort(reverse=True)
print('worst 12:', errs[:12])
print('n', len(errs), 'mean abs err %', round(st.mean(e[0] for e in errs),3))
print('excluding qwen2.5-72b: max', max(e[0] for e in errs if e[1]!='qwen2.5-72b'))
for ft in sorted(table): print(ft, round(table[ft],4))
