# Writes the seed corpus of fuzz_weakscale_args (tests/fuzz/corpus/weakscale_args/): each seed is
# a byte string of indices into the target's token table, so the seeds must be remade when the table
# changes. Usage: python3 tests/fuzz/make_weakscale_args_corpus.py tests/fuzz/corpus/weakscale_args
import re, sys, os
src=open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'fuzz_weakscale_args.cpp')).read()
body=src[src.index('table = {')+len('table = {'):]
body=body[:body.index('};')]
body=re.sub(r'//[^\n]*','',body)
toks=[]
for m in re.finditer(r'"((?:[^"\\]|\\.)*)"|(s\.[a-z_]+(?:\.string\(\))?)',body):
    if m.group(2): toks.append('@'+m.group(2))
    else: toks.append(m.group(1).encode().decode('unicode_escape'))
# adjacent literals? none expected
print(len(toks), file=sys.stderr)
seeds={
 'plan_5b': ('plan','--machine frontier --model 5B --devices 8 --batch 8'),
 'plan_custom_flow': ('plan','--machine frontier --layers 2 --hidden 64 --heads 4 --seq 16 --vocab 64 --devices 8 --batch 8 --evaluator flow --simulate-top 2 --top 2'),
 'plan_layout_trace': ('plan','--machine perlmutter --model 5B --devices 4 --batch 4 --layout 1x1x1x4 --trace @s.trace --csv @s.csv'),
 'plan_alps_set': ('plan','--machine alps --model 5B --devices 16 --batch 16 --set gemm_efficiency_scale=0.8 --library nccl --show-invalid'),
 'plan_local_file': ('plan','--machine @s.machine --layers 2 --hidden 64 --heads 4 --devices 2 --batch 2 --evaluator flow --precision fp32'),
 'plan_missing_dir_csv': ('plan','--machine frontier --model 5B --devices 8 --batch 8 --csv @s.missing'),
 'plan_nothing_fits': ('plan','--machine frontier --model 175B --devices 1 --batch 1'),
 'collective_ar': ('collective','--machine frontier --op all-reduce --bytes 1GiB --devices 16'),
 'collective_layout': ('collective','--machine frontier --op reduce-scatter --bytes 1MiB --layout 2x1x2x2 --group z --algorithm ring'),
 'collective_nodes_every_step': ('collective','--machine perlmutter --op all-gather --bytes 1MiB --nodes 2 --every-step --placement scattered --seed 7'),
 'collective_rhd_routing': ('collective','--machine alps --op all-reduce --bytes 1PiB --devices 8 --algorithm rhd --routing nonminimal --top 3'),
 'collective_bad_bytes': ('collective','--machine frontier --op all-reduce --bytes -1MiB --devices 8'),
 'collective_local_tree': ('collective','--machine local --op all-reduce --bytes 1B --devices 2 --algorithm tree --library openmpi'),
}
out=sys.argv[1]
for name,(cmd,line) in seeds.items():
    b=bytearray([0 if cmd=='plan' else 1])
    for t in line.split(' '):
        b.append(toks.index(t))
    open(os.path.join(out,name),'wb').write(bytes(b))
