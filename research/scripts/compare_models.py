import yaml
from derive_gguf_bpw import size
ref = {x['id']: x for x in yaml.safe_load(open('/work/shared/reference/models.yaml'))['models']}
def run(mid, pub, extra=None, imatrix=True):
    m = dict(ref[mid]); m.update(extra or {})
    print('==', mid, extra or '')
    for ft, gb in pub.items():
        r = size(m, ft, imatrix=imatrix)
        fit = gb * 1e9 * 8 / r['params']
        print(f"  {ft:8s} pub {gb:7.2f} GB  pred {r['bytes']/1e9:7.2f} GB  err {100*(r['bytes']/1e9-gb)/gb:+5.1f}%  fit_bpw(file) {fit:6.3f}  pred_bpw {r['file_bpw']:6.3f}  body {r['body_bpw']:.3f} emb {r['emb']} out {r['out']}")
l70 = {'Q2_K':26.4,'Q3_K_S':30.91,'Q3_K_M':34.27,'Q3_K_L':37.14,'Q4_0':40.12,'Q4_K_S':40.35,'Q4_K_M':42.52,'IQ4_XS':37.90,
       'Q5_K_S':48.66,'Q5_K_M':49.95,'Q6_K':57.89,'Q8_0':74.98,'IQ3_M':31.94,'IQ3_XS':29.3,'IQ3_XXS':27.5,'IQ2_M':24.1,
       'IQ2_S':22.2,'IQ2_XS':21.1,'IQ2_XXS':19.1,'IQ1_M':16.8,'IQ1_S':15.3}
run('llama-3.1-70b', l70, {'llm_type_70b': True})
l8 = {'Q2_K':3.18,'Q3_K_S':3.66,'Q3_K_M':4.02,'Q3_K_L':4.32,'Q4_0':4.66,'Q4_K_S':4.69,'Q4_K_M':4.92,'Q5_0':5.6,'Q5_K_S':5.6,
      'Q5_K_M':5.73,'Q6_K':6.6,'Q8_0':8.54,'F16':16.1,'IQ2_M':2.95,'IQ3_M':3.78,'IQ3_XS':3.52,'IQ4_XS':4.45}
run('llama-3.1-8b', l8)
q72 = {'Q2_K':29.9,'IQ3_XS':32.9,'IQ3_S':34.6,'Q3_K_S':34.6,'IQ3_M':35.6,'Q3_K_M':37.8,'Q3_K_L':39.6,'IQ4_XS':40.3,'Q4_0':41.3,
       'IQ4_NL':41.9,'Q4_K_S':44.0,'Q4_1':45.8,'Q4_K_M':47.5,'Q5_0':50.3,'Q5_K_S':51.5,'Q5_K_M':54.5,'Q5_1':54.7,'Q6_K':64.4}
run('qwen2.5-72b', q72, {'llm_type_70b': True, 'qkv_bias': True}, imatrix=False)
run('qwen2.5-72b', q72, {'llm_type_70b': False, 'qkv_bias': True}, imatrix=False)
q7 = {'Q2_K':3.02,'Q3_K_S':3.49,'Q3_K_M':3.81,'Q3_K_L':4.09,'Q4_0':4.43,'Q4_K_S':4.46,'Q4_K_M':4.68}
run('qwen2.5-7b', q7, {'qkv_bias': True})
q32 = {'IQ3_M':14.8,'IQ4_XS':17.7,'Q3_K_L':17.2,'Q3_K_M':15.9,'Q3_K_S':14.4,'Q4_0':18.7,'Q4_K_M':19.9,'Q4_K_S':18.8,
       'Q5_K_M':23.3,'Q5_K_S':22.6,'Q6_K':26.9,'Q8_0':34.8}
run('qwen2.5-32b', q32, {'qkv_bias': True})
mis = {'IQ1_M':1.76,'IQ1_S':1.62,'IQ2_M':2.5,'IQ2_S':2.31,'IQ2_XS':2.2,'IQ2_XXS':1.99,'IQ3_M':3.29,'IQ3_S':3.19,'IQ3_XS':3.02,
       'IQ3_XXS':2.83,'IQ4_NL':4.13,'IQ4_XS':3.91,'Q2_K':2.72,'Q3_K_S':3.17,'Q3_K_M':3.52,'Q3_K_L':3.83,'Q4_0':4.11,'Q4_K_S':4.14,
       'Q4_K_M':4.37,'Q5_K_M':5.14,'Q6_K':5.95,'Q8_0':7.7,'F16':14.5}
run('mistral-7b-v0.3', mis)
gem = {'IQ1_S':2.38,'IQ1_M':2.55,'IQ2_XXS':2.82,'IQ2_XS':3.07,'IQ2_S':3.21,'IQ2_M':3.43,'IQ3_XXS':3.8,'IQ3_XS':4.15,'IQ3_M':4.49,
       'IQ4_XS':5.18,'IQ4_NL':5.44,'Q2_K':3.81,'Q3_K_S':4.34,'Q3_K_M':4.76,'Q3_K_L':5.13,'Q4_0':5.44,'Q4_1':5.96,'Q4_K_S':5.48,'Q4_K_M':5.76,
       'Q5_0':6.48,'Q5_K_S':6.48}
run('gemma-2-9b', gem, {'norms_per_layer': 4})
