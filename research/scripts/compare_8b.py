import yaml
from derive_gguf_bpw import size
ref = {x['id']: x for x in yaml.safe_load(open('/work/shared/reference/models.yaml'))['models']}
m = ref['llama-3.1-8b']
# llama.cpp tools/quantize/README.md @311c2c9f, meta-llama/Llama-3.1-8B: bits/weight, size GiB
tab = {'IQ1_S':(2.0042,1.87),'IQ1_M':(2.1460,2.01),'IQ2_XXS':(2.3824,2.23),'IQ2_XS':(2.5882,2.42),'IQ2_S':(2.7403,2.56),
'IQ2_M':(2.9294,2.74),'IQ3_XXS':(3.2548,3.04),'IQ3_XS':(3.4977,3.27),'IQ3_S':(3.6606,3.42),'IQ3_M':(3.7628,3.52),
'IQ4_XS':(4.4597,4.17),'IQ4_NL':(4.6818,4.38),'Q2_K_S':(2.9697,2.78),'Q2_K':(3.1593,2.95),'Q3_K_S':(3.6429,3.41),
'Q3_K_L':(4.2979,4.02),'Q4_K_S':(4.6672,4.36),'Q4_K_M':(4.8944,4.58),'Q5_K_S':(5.5704,5.21),'Q5_K_M':(5.7036,5.33),
'Q6_K':(6.5633,6.14),'Q8_0':(8.5008,7.95),'F16':(16.0005,14.96)}
for ft,(b,g) in tab.items():
    r = size(m, ft, imatrix=ft not in ('IQ4_XS','IQ4_NL'))
    print(f"{ft:8s} table {b:7.4f}  pred {r['file_bpw']:7.4f}  diff {r['file_bpw']-b:+.4f}  body {r['body_bpw']:.4f} emb {r['emb']} out {r['out']}")
