import json, sys, subprocess, collections
# extra.py machine noise seeds level: estimated seconds of the card's measurements, base vs after
m, noise, nseeds, level = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
def est(path):
    tot = 0; n = 0; rs = None
    groups = collections.OrderedDict()
    for line in open(path):
        j = json.loads(line)
        r = j.get('record') or (j if 'test' in j and 'group' in j else None)
        if not r or r.get('latency_ns') is not None: continue
        g = r['group']; groups.setdefault(g, []).append(r)
    for g, recs in groups.items():
        flows = [r for r in recs if not r.get('aggregate') and not r.get('sum')]
        if not flows: continue
        rounds = flows[0]['rounds']; nf = len(flows); b = flows[0]['bytes']
        tot += (rounds + (2 if nf > 1 else 1)) * RS + 0.05 + nf * (b / 4e9 + 0.01); n += 1
    return tot, n
out = {}
for b in ['base', 'final']:
    ts = []; ns = []
    for s in range(1, nseeds + 1):
        d = f'/tmp/uncert/ex_{b}'
        subprocess.run([f'/tmp/uncert/gpuqual.{b}', 'card', '--sim', m, '--sim-seed', str(s), '--sim-noise', noise, '--level', level, '-o', d, '--force', '-q'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        c = json.load(open(d + '/card.json'))['card']
        global RS
        RS = c['quality']['round_s']
        t, n = est(d + '/journal.jsonl'); ts.append(t); ns.append(n)
    out[b] = (sum(ts)/len(ts), max(ts), sum(ns)/len(ns), c.get('planned_s'))
print(m, noise, level, {k: tuple(round(x, 1) if isinstance(x, float) else x for x in v) for k, v in out.items()})
