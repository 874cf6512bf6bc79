"""The word lists: stop words, language markers, number words, units, precision, workload, batch and context words.

Every list is a frozenset or dict of lower-case words as the lexer yields them; nothing here reads a text.
"""
from __future__ import annotations

from engine.formats.precision import precision_words

TOKENS_PER_K = 1024  # "k" as inference servers count it: 32k = 32,768 tokens
TOKENS_PER_M = 1024 * 1024

EN_STOP = frozenset("""
a an the for of to with at on in into onto and or but nor i me my mine we us our you your he she they them it
its is are was were be been being am can could would should will shall may might must do does did done doing
much many how what which who whom whose why where when there here this that these those if then than so such as
by from about approx approximately around roughly just only also please pls plz need needs needed needing want
wants wanted wanna like vram memory ram gpu gpus card cards graphics model models llm llms require requires
required requirement requirements have has had having get got getting use using used help estimate estimated
calculate check size sizing fit fits fitting enough big large more less minimum min max maximum least per each
every any some all lot lots whole total overall hey hi hello thanks thank thx cheers ok okay yes no not don t
doesn isn s ll ve re m d quantized quantised quantization quantisation quant weights weight params parameters
parameter precision context tokens token length window instruct chat base hf gguf safetensors version variant
rent rental renting buy price prices cost costs cheap cheapest recommend recommended best setup server machine
node instance cloud want full half single once simultaneously up go going let lets know tell show give me
mode running time long bot cardfit meta vllm ollama llamacpp transformers pytorch really actually maybe
possibly something anything currently exactly float floats month months monthly hour hours hourly day days
daily week weeks weekly via
would just still even already right now today quick quickly thing things way
""".split())

DE_STOP = frozenset("""
ich du er sie es wir ihr man mich mir mein meine meinen meinem meiner uns unser unsere wie viel viele vielen
welche welcher welches welchen welchem was wer wo wann warum für fuer mit auf in im ins am an ans zu zum zur bei
beim von vom aus nach über ueber unter und oder aber der die das den dem des dies diese dieser dieses diesem ein
eine einer einem einen eines ist sind war bin bist seid sein kann kannst können koennen könnte koennte würde
wuerde würden soll sollte muss müssen brauche brauchen braucht brauchst benötige benötigen benötigt benoetige
benoetigt nötig noetig will möchte moechte hätte haette habe hast hat haben gibt geben modell modelle modells
karte karten grafikkarte grafikkarten speicher arbeitsspeicher grafikspeicher genug reicht reichen reichts passt
passen paßt rein hinein da dafür dazu denn doch noch schon nur auch etwa ca circa ungefähr ungefaehr mindestens
maximal bitte danke hallo servus moin tschüss groß gross größe groesse grösse wieviel wieviele nicht kein keine
so als wenn dann ob quantisiert quantisierung gewichte parameter kontext länge laenge lassen mal eigentlich bzw
jeweils je pro insgesamt gesamt volle voller volles vollen halbe halber halben gleichzeitig brauch mieten miete
kosten kostet preis günstigste guenstigste empfehlen empfiehlst empfehlung sollte rechnen berechnen
parametern wirklich wollen wollten gerne gern vielleicht monat monate monatlich stunde stunden stündlich tag
tage täglich woche wochen
etwas welchen würdest kannst könnt können um damit dabei davon darauf sowie sodass schafft schaffen
""".split())

STOP_WORDS = EN_STOP | DE_STOP

DE_MARKERS = frozenset("""
bei beim zum zur vom im wir mein meine meinen möchte moechte habe haben hat gibt geht welches kosten brauchen
braucht benötigt soll sollte können würde nutzern gleichzeitigen parallelen auch noch schon nur wenn dann
guten morgen abend modelle grafikkarten schafft schaffen
ich brauche brauchen benötige benoetige wie viel viele für fuer mit auf einer einem und oder der die das den dem
ein eine einen ist sind kann reichen reicht passt genauigkeit nutzer nutzern benutzer konversationen
konversation gleichzeitige gleichzeitigen milliarden mrd trainieren feintunen feintuning ausführen ausfuehren betreiben
hosten inferenz kontext zwei drei vier fünf fuenf sechs sieben acht neun zehn elf zwölf zwoelf karte karten
grafikkarte speicher welche welcher welches danke hallo bitte volle voller volles halbe halber anfragen
gespräche modell mir genug wieviel laufen läuft lassen mich noch ohne nicht gibt kostet preis billionen eins
volles präzision sitzungen unterhaltungen leute personen wieviele grösse größe gleichzeitig parallele
milliarde
""".split())

EN_MARKERS = frozenset("""
how much many need needs for with on and the a an is what which run serve serving train users user
concurrent requests conversations billion precision full half context hello thanks thank
please of at to can i my do does single two three four five six seven eight nine ten eleven twelve memory card
cards weather have fit fits enough parallel sessions people running inference deploy host hosting much
""".split())

NUMBER_WORDS: dict[str, int] = {
    "one": 1, "single": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "sixteen": 16, "twenty": 20,
    "eins": 1, "ein": 1, "eine": 1, "einer": 1, "einem": 1, "einen": 1, "einzelne": 1, "einzelnen": 1,
    "einzige": 1, "einzigen": 1, "zwei": 2, "drei": 3, "vier": 4, "fünf": 5, "fuenf": 5, "sechs": 6,
    "sieben": 7, "acht": 8, "neun": 9, "zehn": 10, "elf": 11, "zwölf": 12, "zwoelf": 12, "sechzehn": 16,
    "zwanzig": 20,
}
# Number words for sizes and counts: "seven billion", "seventy-two billion", "four hundred and five billion",
# "sieben Milliarden", "zweiundsiebzig Milliarden", "vierhundertfünf Milliarden". English numbers above twenty
# are several words (read by engine.parse.spoken.word_number); German ones are one word, all of 1..999 listed here.
EN_NUMBER_WORDS: dict[str, int] = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
    "seventeen": 17, "eighteen": 18, "nineteen": 19,
}
EN_TENS: dict[str, int] = {
    "twenty": 20, "thirty": 30, "forty": 40, "fourty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
    "ninety": 90,
}
EN_UNIT_WORDS = {word: value for word, value in EN_NUMBER_WORDS.items() if value < 10}


def _german_number_words() -> dict[str, int]:
    units = {1: ["eins"], 2: ["zwei"], 3: ["drei"], 4: ["vier"], 5: ["fünf", "fuenf"], 6: ["sechs"],
             7: ["sieben"], 8: ["acht"], 9: ["neun"]}
    joined = {**units, 1: ["ein"]}  # "einundzwanzig", "einhundert"
    below: dict[int, list[str]] = dict(units)
    below.update({10: ["zehn"], 11: ["elf"], 12: ["zwölf", "zwoelf"], 13: ["dreizehn"], 14: ["vierzehn"],
                  15: ["fünfzehn", "fuenfzehn"], 16: ["sechzehn"], 17: ["siebzehn"], 18: ["achtzehn"],
                  19: ["neunzehn"]})
    tens = {20: ["zwanzig"], 30: ["dreißig", "dreissig"], 40: ["vierzig"], 50: ["fünfzig", "fuenfzig"],
            60: ["sechzig"], 70: ["siebzig"], 80: ["achtzig"], 90: ["neunzig"]}
    for ten, ten_words in tens.items():
        below[ten] = ten_words
        for unit in range(1, 10):
            below[ten + unit] = [f"{head}und{tail}" for head in joined[unit] for tail in ten_words]
    words: dict[str, int] = {}
    for value, forms in below.items():
        for form in forms:
            words[form] = value
    for hundred in range(1, 10):
        heads = ["hundert", "einhundert"] if hundred == 1 else [f"{unit}hundert" for unit in joined[hundred]]
        for head in heads:
            words[head] = hundred * 100
            for value, forms in below.items():
                for form in forms:
                    words[head + form] = hundred * 100 + value
    return words


DE_NUMBER_WORDS: dict[str, int] = _german_number_words()
# Every single word that is a number ("seven", "zweiundsiebzig", "ein", "single"); "hundred" joins English ones.
WORD_NUMBERS: dict[str, int] = {**DE_NUMBER_WORDS, **EN_NUMBER_WORDS, **EN_TENS, **NUMBER_WORDS}
# Before a size these are articles, not numbers: "a 70B", "ein 7B Modell" -- only "a billion" is 1B.
SIZE_ARTICLES = frozenset({"a", "an", "single", "ein", "eine", "einer", "einem", "einen", "einzelne", "einzelnen",
                           "einzige", "einzigen"})
DE_MARKERS = DE_MARKERS | frozenset(DE_NUMBER_WORDS)
EN_MARKERS = EN_MARKERS | frozenset(EN_NUMBER_WORDS) | frozenset(EN_TENS) | {"hundred"}
SPELLED_SIZE_UNITS = frozenset({"billion", "billions", "milliarden", "milliarde", "trillion", "trillions",
                                "billionen"})
# Words that mean "one card" in front of a card name ("on an H100", "auf einer RTX 4090").
CARD_ONE = frozenset({"a", "an", "single", "one", "ein", "eine", "einer", "einem", "einen", "einzelnen",
                      "einzigen", "einzelne", "einzige", "eins"})
GERMAN_ARTICLES = frozenset({"ein", "eine", "einer", "einem", "einen"})
CARD_MULTIPLIERS = {"dual": 2, "quad": 4, "doppel": 2, "doppelte": 2}

SIZE_UNITS: dict[str, float] = {
    "b": 1, "bn": 1, "billion": 1, "billions": 1, "milliarden": 1, "milliarde": 1, "mrd": 1, "mia": 1,
    "t": 1000, "tn": 1000, "trillion": 1000, "trillions": 1000, "billionen": 1000,
}
CONTEXT_SUFFIX: dict[str, int] = {"k": TOKENS_PER_K, "m": TOKENS_PER_M}
CONTEXT_UNIT_WORDS = frozenset({"tokens", "token", "tok", "toks", "ctx", "context", "kontext"})
MILLION_WORDS = frozenset({"million", "millionen", "mio"})
PARAM_WORDS = frozenset({"params", "parameters", "parameter", "parametern"})
GB_UNITS: dict[str, float] = {
    "gb": 1, "gigabyte": 1, "gigabytes": 1, "gib": 1.073741824, "tb": 1000, "terabyte": 1000, "g": 1,
}
BIT_WORDS = frozenset({"bit", "bits", "bpw"})  # bpw: bits per weight ("4.5 bpw", EXL2)
# The seeds' precisions by the words that name them (engine/formats/formats.yaml `precisions`)
BITS_TO_PRECISION: dict[int, str] = precision_words().widths  # "4-bit" -> int4, "16-bit" -> bf16
# What engine.parse.precision returns for a precision Cardfit does not size ("3-bit",
# "q5_k_m", "fp6", "4.5bpw"): as weights an error, as a KV cache precision an ignored entry.
UNSIZED = "unsized"
UNSIZED_PREFIXES = frozenset({"int", "fp", "float", "bf", "bfloat"})
FP4_WORDS = frozenset({"fp4", "mxfp4", "nvfp4", "float4"})
# ---- named weight formats (engine/formats/table.py)
# What engine.parse.precision.precision_token returns for a word that names only a format, with no seed precision
# ("exl2", "bnb"): it ends a model name; the format itself is read with the word after it.
FORMAT_ONLY = "format"
EXL2_WORDS = frozenset({"exl2", "exllamav2"})
BNB_WORDS = frozenset({"bnb", "bitsandbytes"})
FORMAT_HEADS = EXL2_WORDS | BNB_WORDS | {"gptq"}
# "gptq int8", "bnb 4bit": the word after a format head that picks its width -> the format's name in the table
FORMAT_PAIRS: dict[tuple[str, str], str] = {
    ("gptq", "int8"): "gptq_int8", ("gptq", "8bit"): "gptq_int8", ("gptq", "int4"): "gptq", ("gptq", "4bit"): "gptq",
    **{(head, width): "bnb_nf4" for head in BNB_WORDS for width in ("4bit", "nf4", "int4")},
    **{(head, width): "bnb_int8" for head in BNB_WORDS for width in ("8bit", "int8")},
}
# The seeds' own precision words keep their meaning (4/2/1/0.5 B per parameter); awq, gptq, nf4 and w4a16 are
# read as int4 and also name their format.
FORMAT_SYNONYMS = precision_words().format_synonyms
# Precision words read one by one ("full"/"half" only count as "full precision"/"half precision": PRECISION_PHRASES)
PRECISION_WORDS: dict[str, str] = precision_words().question_words
PRECISION_PREFIXES = frozenset({"int", "fp", "bf", "float", "bfloat", "q", "f"})
PRECISION_PHRASES: dict[tuple[str, str], str] = precision_words().phrases
KV_WORDS = frozenset({"kv", "kvcache", "kv_cache"})
KV_FILLERS = frozenset({"cache", "caches", "in", "im", "at", "as", "als", "mit", "to", "auf", "on", "with",
                        "quantized", "quantised", "quantisiert", "of", "set", "use", "using", "precision",
                        "genauigkeit", "is", "ist", "the", "den", "der", "die", "das"})
KV_LINKS = frozenset({"for", "für", "fuer", "in", "im", "of", "on", "as", "als"})
ARTICLES = frozenset({"the", "den", "die", "das", "der", "dem"})

WORKLOAD_WORDS: dict[str, str] = {}
for _word in ("serve serving served serves run running runs inference inferencing infer deploy deploying deployed "
              "deployment host hosting hosted ausführen ausfuehren betreiben betrieb hosten inferenz deployen "
              "bereitstellen laufen läuft laeuft").split():
    WORKLOAD_WORDS[_word] = "inference"
for _word in ("finetune finetunes finetuning finetuned finetunen feintunen feintuning train trains training "
              "trained trainieren trainiert nachtrainieren pretrain pretraining sft").split():
    WORKLOAD_WORDS[_word] = "full"
WORKLOAD_WORDS.update({"lora": "lora", "loras": "lora", "qlora": "qlora"})
WORKLOAD_RANK = {"inference": 1, "full": 2, "lora": 3, "qlora": 4}
WORKLOAD_PHRASES: dict[tuple[str, ...], str] = {}
for _tail in (("fine", "tune"), ("fine", "tuning"), ("fine", "tuned"), ("fine", "tunen"), ("fine", "tunes")):
    WORKLOAD_PHRASES[_tail] = "full"
    for _head in ("full", "volles", "vollständiges", "vollstaendiges", "vollen", "komplettes"):
        WORKLOAD_PHRASES[(_head, *_tail)] = "full"
for _head in ("full", "volles", "vollständiges", "vollstaendiges"):
    WORKLOAD_PHRASES[(_head, "finetune")] = "full"
    WORKLOAD_PHRASES[(_head, "finetuning")] = "full"
    WORKLOAD_PHRASES[(_head, "training")] = "full"
WORKLOAD_PHRASES[("q", "lora")] = "qlora"
WORKLOAD_PHRASE_HEADS = frozenset(phrase[0] for phrase in WORKLOAD_PHRASES)

BATCH_WORDS = frozenset({"batch", "batches", "bs", "batchsize", "batch_size", "batchgröße", "batchgroesse",
                         "batchgrösse", "concurrency", "parallelism", "parallelität"})
BATCH_FILLERS = frozenset({"size", "of", "von", "größe", "groesse", "grösse", "is", "ist", "at", "mit", "with",
                           "from", "auf", "to", "level"})
CONTEXT_WORDS = frozenset({"ctx", "context", "kontext", "kontextlänge", "kontextlaenge", "kontextfenster",
                           "seq", "seqlen", "seq_len", "sequence", "sequenz", "sequenzlänge", "sequenzlaenge",
                           "max_len", "max_model_len", "context_length", "prompt"})
CONTEXT_FILLERS = frozenset({"length", "len", "window", "size", "of", "von", "länge", "laenge", "fenster", "is",
                             "ist", "at", "mit", "with", "from", "up", "to", "auf", "bis", "zu"})
USER_NOUNS = frozenset("""
users user requests request conversations conversation sessions session streams stream chats clients client
sequences sequence seqs prompts people persons customers queries calls agents nutzer nutzern nutzerinnen
benutzer benutzern anwender anwendern anfragen anfrage konversationen konversation gespräche gespräch
gespraeche gespraech unterhaltungen unterhaltung sitzungen sitzung personen leute kunden kunde dialoge customer
""".split())
USER_ADJECTIVES = frozenset("""
concurrent parallel simultaneous active live gleichzeitige gleichzeitigen gleichzeitiger gleichzeitig
parallele parallelen paralleler simultane simultanen aktive aktiven aktiver parallel-laufende
""".split())
GPU_NOUNS = frozenset({"gpu", "gpus", "cards", "card", "karten", "karte", "grafikkarten", "grafikkarte"})
GPU_NOUN_LEAD = frozenset({"graphics"})

# Words with a meaning of their own: a model-name window never runs over them.
KEYWORDS = (
    frozenset(PRECISION_WORDS) | FP4_WORDS | KV_WORDS | frozenset(WORKLOAD_WORDS) | BATCH_WORDS
    | CONTEXT_WORDS | USER_NOUNS | USER_ADJECTIVES | frozenset(SIZE_UNITS) | CONTEXT_UNIT_WORDS | frozenset(GB_UNITS)
    | BIT_WORDS | frozenset(WORD_NUMBERS) | WORKLOAD_PHRASE_HEADS
    | {"x", "cache", "region", "k", "vs", "versus", "hundred"}
)
# Words that give a plain number its meaning ("70 billion", "32 k", "24 GB", "8 users", "2 x", "4 GPUs").
AFTER_NUMBER = (frozenset(SIZE_UNITS) | {"k", "m", "x"} | MILLION_WORDS | CONTEXT_UNIT_WORDS | frozenset(GB_UNITS)
                | USER_ADJECTIVES | USER_NOUNS | GPU_NOUNS | GPU_NOUN_LEAD)
# Stop words that can start nothing: the main pass skips them at once.
INERT = STOP_WORDS - KEYWORDS - {"a", "an"} - {phrase[0] for phrase in PRECISION_PHRASES} - CONTEXT_WORDS \
    - BATCH_WORDS - KV_WORDS - WORKLOAD_PHRASE_HEADS - frozenset(WORKLOAD_WORDS) - frozenset(WORD_NUMBERS)
# Not worth listing as "ignored" even when nothing used them.
QUIET = STOP_WORDS | {"cache", "x", "region", "fine", "precision", "genauigkeit", "präzision", "vs", "versus"}

# Words that tell models of one family apart ("Qwen2.5 Coder", "Phi-3 medium", "R1 Distill"): a model name that
# contains one is never read as a model whose names lack it (engine.parse.names). Words that do not change the
# shape (instruct, chat, base, it, hf) are not here.
DISTINGUISHING = frozenset("""
distill distilled coder code vl vision math guard medium small mini large nano tiny air scout maverick audio omni
embed embedding reward flash pro plus nemo turbo lite next
""".split())
# Other spellings of a word model names are made of: "R1 distilled Qwen 32B" and the German "R1 Destillat Qwen
# 32B" name the distill, never its teacher DeepSeek-R1 (read as "distill", said in the note as a typo is).
NAME_WORD_SPELLINGS = {"distilled": "distill", "destillat": "distill", "destilliert": "distill",
                       "destillierte": "distill", "destilliertes": "distill", "destillierter": "distill",
                       "destillation": "distill"}
# Family words of well-known open models the registry may not list yet: they start a model name, so "Kimi K2"
# or "GLM-4.5" is answered as a model Cardfit does not know, never as no question or as another model.
UNLISTED_FAMILIES = frozenset("""
kimi glm chatglm whisper olmo internlm internvl baichuan minimax hunyuan nemotron starcoder starcoder2 codestral
devstral magistral pixtral smollm smollm2 tinyllama vicuna dbrx jamba exaone stablelm llava minicpm granite ernie
cogvlm
""".split())
# ---- what kind of answer, and how it is paid (engine.parse.talk reads these)
PRICE_WORDS = frozenset({"price", "prices", "pricing", "cost", "costs", "costing", "kostet", "kosten", "preis",
                         "preise", "rate", "rates", "tarif"})
HOW_MUCH = frozenset({("how", "much"), ("wie", "viel"), ("wieviel",)})
CHEAPEST_WORDS = frozenset({"cheapest", "günstigste", "günstigsten", "günstigster", "günstigstes", "guenstigste",
                            "guenstigsten", "guenstigster", "billigste", "billigsten", "billigster", "billigstes",
                            "preiswerteste", "preiswertesten", "preiswertester"})
CHEAPEST_PHRASES = frozenset({("lowest", "price"), ("lowest", "cost"), ("least", "expensive"),
                              ("niedrigste", "preis"), ("niedrigsten", "preis"), ("niedrigster", "preis")})
# Between two card names these make the question a comparison ("H100 vs A100", "H100 oder A100").
COMPARE_WORDS = frozenset({"compare", "comparing", "comparison", "vs", "versus", "vergleiche", "vergleich",
                           "vergleichen", "against", "gegen", "better", "besser", "cheaper",
                           "günstiger", "guenstiger", "billiger"})
# "H100 oder A100 für 70B": one "or" between two cards asks which; several ("fp16 or int4 on H100 or A100")
# list options, and the first of each is used.
CHOICE_WORDS = frozenset({"or", "oder"})
BILLING_UNITS: dict[str, str] = {
    "hour": "hour", "hours": "hour", "hr": "hour", "stunde": "hour", "stunden": "hour",
    "day": "day", "days": "day", "tag": "day", "tage": "day", "tages": "day",
    "week": "week", "weeks": "week", "woche": "week", "wochen": "week",
    "month": "month", "months": "month", "monat": "month", "monate": "month", "monats": "month",
}
BILLING_ADJECTIVES: dict[str, str] = {
    "hourly": "hour", "daily": "day", "weekly": "week", "monthly": "month", "stündlich": "hour",
    "stuendlich": "hour", "täglich": "day", "taeglich": "day", "wöchentlich": "week", "woechentlich": "week",
    "monatlich": "month",
}
# Words in front of a period that make it the billing period: "per hour", "for a week", "pro Tag", "im Monat".
BILLING_LEADS = frozenset({"per", "pro", "a", "an", "one", "for", "für", "fuer", "je", "im", "am", "each", "every",
                           "ein", "eine", "einen", "einer", "einem", "1"})
# The lead words that are an article: the second of two leads ('for a', 'für eine'); another lead is a preposition.
BILLING_ARTICLES = frozenset({"a", "an", "one", "ein", "eine", "einen", "einer", "einem", "1"})
# "for 2 weeks", "für 3 Tage": the words before a number of periods that make it the billing span
SPAN_LEADS = frozenset({"for", "für", "fuer", "over", "über", "ueber"})
# A money amount in US dollars: "500 USD", "USD 800", "1000 dollars" ("$" is read from the text itself)
USD_WORDS = frozenset({"usd", "dollar", "dollars", "bucks"})
# The words before an amount that make it a budget: "under $1000", "Budget 500 $", "bis 800 USD"
MONEY_LEADS = frozenset({"under", "below", "max", "maximum", "budget", "within", "unter", "bis", "höchstens",
                         "hoechstens", "maximal", "than", "less", "of", "von", "mit", "with", "my", "mein",
                         "meinem", "to", "up", "about", "around", "etwa", "ca", "rund", "for", "für", "a", "an"})
MAX_BILLING_LEADS = 2  # "for a week", "für eine Woche"
# Coins as people name them -> the ticker a catalog lists (whether the provider takes it is the engine's call).
COIN_WORDS: dict[str, str] = {
    "btc": "BTC", "bitcoin": "BTC", "bitcoins": "BTC", "xbt": "BTC", "eth": "ETH", "ether": "ETH",
    "ethereum": "ETH", "usdt": "USDT", "tether": "USDT", "usdc": "USDC", "xmr": "XMR", "monero": "XMR",
    "sol": "SOL", "solana": "SOL", "ltc": "LTC", "litecoin": "LTC", "doge": "DOGE", "dogecoin": "DOGE",
    "bnb": "BNB", "trx": "TRX", "tron": "TRX", "xrp": "XRP", "ripple": "XRP", "dai": "DAI", "cardano": "ADA",
}
PAY_WORDS = frozenset({"pay", "paying", "paid", "payment", "zahlen", "zahle", "bezahlen", "bezahle", "zahlung",
                       "bezahlung", "crypto", "krypto"})
# "my 4090", "meiner 4090": exactly one card, whatever sets the card is rented in.
CARD_MINE = frozenset({"my", "mein", "meine", "meiner", "meinem", "meinen", "our", "unser", "unsere", "unserer",
                       "unserem", "unseren"})
# "a B200", "eine H200": one card where the card is rented singly, else the card's smallest set that works.
# "auf der 4090", "auf dem H100", "on the 4090", "passt auf die 4090": the singular definite article names one card
# (a card rented only in sets takes its smallest set, as after "a"); a count after it ("the 2x 4090") is the count.
CARD_THE_ONE = frozenset({"der", "dem", "die", "the"})
# "2x 3090 (48gb total)": the memory after the cards is what they hold together.
TOTAL_WORDS = frozenset({"total", "combined", "insgesamt", "gesamt", "zusammen"})
CARD_ARTICLES = frozenset({"a", "an", "one", "ein", "eine", "einer", "einem", "einen", "eins"})
# GPUs a catalog may not rent, so that "2x 3060 12gb" names a card (answered "does not rent"), not a budget.
GEFORCE_RE_TEXT = r"(?:[1-9]0[5-9]0|1[0-6][5-8]0|[2-5]0[5-9]0)(?:ti|super)?"
OTHER_GPU_PREFIXES = frozenset({"rtx", "gtx", "geforce", "rx", "radeon", "nvidia", "quadro", "tesla"})
OTHER_GPU_NAMES = frozenset({"t4", "v100", "p100", "p40", "k80", "a10", "a10g", "a16", "a30", "a2", "l20", "h20",
                             "h800", "a800", "gh200", "mi250", "mi250x", "mi210", "mi325x", "mi355x", "a4000",
                             "a4500", "a5000", "a6000", "7900xtx", "7900xt"})
GPU_SUFFIXES = frozenset({"ti", "super", "xt", "xtx"})
EN_MARKERS = EN_MARKERS | {"price", "cost", "cheapest", "compare", "per", "week", "hour", "day", "month", "pay",
                           "versus", "hourly", "daily", "weekly", "monthly", "does"}
DE_MARKERS = DE_MARKERS | {"pro", "woche", "stunde", "monat", "günstigste", "günstigsten", "billigste",
                           "zahlen", "bezahlen", "vergleiche", "vergleich", "kostet", "meiner", "meinem",
                           "täglich", "wöchentlich", "monatlich", "stündlich"}
QUIET = (QUIET | PAY_WORDS | COMPARE_WORDS | CHOICE_WORDS | CHEAPEST_WORDS | PRICE_WORDS
         | {"expensive", "lowest", "least", "billed", "billing", "abgerechnet"})
