# Whisper params from openai/whisper whisper/model.py structure (positional_embedding of the encoder is a buffer)
def attn(s): return 3*s*s + 3*s   # query(bias) key(no bias) value(bias) out(bias): 4*s*s + 3*s
def attn(s): return 4*s*s + 3*s
def ln(s): return 2*s
def block(s, cross):
    p = attn(s)+ln(s) + (s*4*s+4*s + 4*s*s+s) + ln(s)
    if cross: p += attn(s)+ln(s)
    return p
def whisper(n_mels, s, enc_layers, dec_layers, vocab, text_ctx=448):
    enc = (n_mels*s*3+s) + (s*s*3+s) + enc_layers*block(s,False) + ln(s)
    dec = vocab*s + text_ctx*s + dec_layers*block(s,True) + ln(s)
    return enc, dec, enc+dec
for name,args in {'large-v3':(128,1280,32,32,51866),'large-v3-turbo':(128,1280,32,4,51866),'medium':(80,1024,24,24,51865),'large-v2':(80,1280,32,32,51865)}.items():
    e,d,t=whisper(*args); print(name, 'enc',e,'dec',d,'total',t, '(+ enc pos buffer 1500*s not a param)')
