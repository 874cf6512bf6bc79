"""Published GGUF file sizes (decimal GB as shown on the pages cited) used for the fits."""
LLAMA8_TABLE = {  # llama.cpp tools/quantize/README.md @311c2c9f, meta-llama/Llama-3.1-8B: (bits/weight, GiB)
 'IQ1_S':(2.0042,1.87),'IQ1_M':(2.1460,2.01),'IQ2_XXS':(2.3824,2.23),'IQ2_XS':(2.5882,2.42),'IQ2_S':(2.7403,2.56),
 'IQ2_M':(2.9294,2.74),'IQ3_XXS':(3.2548,3.04),'IQ3_XS':(3.4977,3.27),'IQ3_S':(3.6606,3.42),'IQ3_M':(3.7628,3.52),
 'IQ4_XS':(4.4597,4.17),'IQ4_NL':(4.6818,4.38),'Q2_K_S':(2.9697,2.78),'Q2_K':(3.1593,2.95),'Q3_K_S':(3.6429,3.41),
 'Q3_K_L':(4.2979,4.02),'Q4_K_S':(4.6672,4.36),'Q4_K_M':(4.8944,4.58),'Q5_K_S':(5.5704,5.21),'Q5_K_M':(5.7036,5.33),
 'Q6_K':(6.5633,6.14),'Q8_0':(8.5008,7.95),'F16':(16.0005,14.96)}
PUB = {
 'llama-3.1-8b': {'Q2_K':3.18,'Q3_K_S':3.66,'Q3_K_M':4.02,'Q3_K_L':4.32,'Q4_0':4.66,'Q4_K_S':4.69,'Q4_K_M':4.92,'Q5_0':5.6,'Q5_K_S':5.6,
      'Q5_K_M':5.73,'Q6_K':6.6,'Q8_0':8.54,'F16':16.1,'IQ2_M':2.95,'IQ3_M':3.78,'IQ3_XS':3.52,'IQ4_XS':4.45},
 'llama-3.1-70b': {'Q2_K':26.4,'Q3_K_S':30.91,'Q3_K_M':34.27,'Q3_K_L':37.14,'Q4_0':40.12,'Q4_K_S':40.35,'Q4_K_M':42.52,'IQ4_XS':37.90,
      'Q5_K_S':48.66,'Q5_K_M':49.95,'Q6_K':57.89,'Q8_0':74.98,'IQ3_M':31.94,'IQ3_XS':29.3,'IQ3_XXS':27.5,'IQ2_M':24.1,
      'IQ2_S':22.2,'IQ2_XS':21.1,'IQ2_XXS':19.1,'IQ1_M':16.8,'IQ1_S':15.3},
 'mistral-7b-v0.3': {'IQ1_M':1.76,'IQ1_S':1.62,'IQ2_M':2.5,'IQ2_S':2.31,'IQ2_XS':2.2,'IQ2_XXS':1.99,'IQ3_M':3.29,'IQ3_S':3.19,'IQ3_XS':3.02,
      'IQ3_XXS':2.83,'IQ4_NL':4.13,'IQ4_XS':3.91,'Q2_K':2.72,'Q3_K_S':3.17,'Q3_K_M':3.52,'Q3_K_L':3.83,'Q4_0':4.11,'Q4_K_S':4.14,
      'Q4_K_M':4.37,'Q5_K_M':5.14,'Q6_K':5.95,'Q8_0':7.7,'F16':14.5},
 'qwen2.5-7b': {'Q2_K':3.02,'Q3_K_S':3.49,'Q3_K_M':3.81,'Q3_K_L':4.09,'Q4_0':4.43,'Q4_K_S':4.46,'Q4_K_M':4.68},
 'qwen2.5-32b': {'IQ3_M':14.8,'IQ4_XS':17.7,'Q3_K_L':17.2,'Q3_K_M':15.9,'Q3_K_S':14.4,'Q4_0':18.7,'Q4_K_M':19.9,'Q4_K_S':18.8,
      'Q5_K_M':23.3,'Q5_K_S':22.6,'Q6_K':26.9,'Q8_0':34.8},
 'qwen2.5-72b': {'Q2_K':29.8,'Q3_K_S':34.5,'Q3_K_M':37.7,'Q3_K_L':39.5,'Q4_0':41.2,'IQ3_XS':32.9,'IQ3_M':35.6,'IQ4_XS':40.3,
      'Q4_K_S':44.0,'Q4_K_M':47.5,'Q5_K_S':51.5,'Q5_K_M':54.5,'Q6_K':64.4},
 'gemma-2-9b': {'IQ1_S':2.38,'IQ1_M':2.55,'IQ2_XXS':2.82,'IQ2_XS':3.07,'IQ2_S':3.21,'IQ2_M':3.43,'IQ3_XXS':3.8,'IQ3_XS':4.15,'IQ3_M':4.49,
      'IQ4_XS':5.18,'IQ4_NL':5.44,'Q2_K':3.81,'Q3_K_S':4.34,'Q3_K_M':4.76,'Q3_K_L':5.13,'Q4_0':5.44,'Q4_1':5.96,'Q4_K_S':5.48,'Q4_K_M':5.76,
      'Q5_0':6.48,'Q5_K_S':6.48},
}
SRC = {
 'llama-3.1-8b': "second-state/Meta-Llama-3.1-8B-GGUF README (llama.cpp b3613; Q2_K..F16) and bartowski/Meta-Llama-3.1-8B-Instruct-GGUF tree 8c92eab (IQ2_M, IQ3_M, IQ3_XS, IQ4_XS)",
 'llama-3.1-70b': "bartowski/Meta-Llama-3.1-70B-Instruct-GGUF README commit 07378e6 (Q4_K_M 42.52, IQ4_XS 37.90, IQ3_M 31.94) and tree 69fe156; 2-decimal values for Q3_K_*/Q4_0/Q4_K_S/Q5_K_*/Q6_K/Q8_0 from the bartowski table reproduced at ozeki.chat/p_8590 (same files, consistent with the tree's 3-digit sizes); mradermacher/Meta-Llama-3.1-70B-Instruct-i1-GGUF tree 48284cc (IQ3_XS, IQ3_XXS, IQ2_M, IQ2_XXS); ThomasBaruzier/Meta-Llama-3.1-70B-Instruct-GGUF tree 71e6f93 (IQ1_S, IQ1_M, IQ2_S, IQ2_XS)",
 'mistral-7b-v0.3': "bartowski/Mistral-7B-Instruct-v0.3-GGUF tree main (IQ1..IQ4, Q2_K) and its lmstudio-community duplicate tree 29a7854 (Q3_K_L, Q4_K_M, Q5_K_M, Q6_K, Q8_0); mradermacher/Mistral-7B-Instruct-v0.3-GGUF tree main (Q3_K_S, Q3_K_M, Q4_K_S); DevQuasar/Mistral-7B-Instruct-v0.3-GGUF tree 4b99f00 (Q4_0, F16)",
 'qwen2.5-7b': "second-state/Qwen2.5-7B-Instruct-GGUF README (llama.cpp, static)",
 'qwen2.5-32b': "bartowski/Qwen2.5-32B-Instruct-GGUF trees bbe4cfb and 7a91f91",
 'qwen2.5-72b': "second-state/Qwen2.5-72B-Instruct-GGUF README (Q2_K, Q3_K_*, Q4_0) and mradermacher/Qwen2.5-72B-Instruct-GGUF README (static quants, 1 decimal, seem rounded up ~0.1 GB)",
 'gemma-2-9b': "bartowski/gemma-2-9b-it-GGUF tree 599b2dd; RichardErkhov/google_-_gemma-2-9b-it-gguf tree 3ab42ab (Q4_0, Q4_1, Q5_0, Q5_K_S); ThomasBaruzier/gemma-2-9b-it-GGUF tree 11047fd (IQ1_S, IQ1_M, IQ2_XXS, IQ4_NL)",
}
