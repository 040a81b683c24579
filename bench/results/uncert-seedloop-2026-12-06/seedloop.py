#!/usr/bin/env python3
# usage: seedloop.py BIN OUTPREFIX noise level seeds machines...
import json, subprocess, sys, collections, os
binp, pref, noise, level, nseeds = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
machines = sys.argv[6:]
res = {}
for m in machines:
    name = os.path.basename(m).replace('.topo', '')
    rows = []
    for s in range(1, nseeds + 1):
        d = f"{pref}/{name}"
        subprocess.run([binp, 'card', '--sim', m, '--sim-seed', str(s), '--sim-noise', noise, '--level', level,
                        '-o', d, '--force', '-q'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            doc = json.load(open(d + '/card.json'))
        except Exception as e:
            rows.append(('ERR', '', '', '')); continue
        c = doc['card']
        warns = sorted(set(k['id'] for k in c['checks'] if k['verdict'] not in ('pass', 'info', None)))
        dom = json.dumps(doc['domains'])
        bns = sorted(f"{b['direction']}:{','.join(map(str,b['gpus']))}" for b in doc['bottlenecks'])
        bns += sorted(f"?{u['direction']}:{','.join(map(str,u['gpus']))}" for u in c.get('undetermined', []))
        rows.append((c['verdict'], ' '.join(warns), dom, ' '.join(bns)))
    ver = collections.Counter(r[0] for r in rows)
    doms = collections.Counter(r[2] for r in rows)
    bns = collections.Counter(r[3] for r in rows)
    why = collections.Counter(r[1] for r in rows if r[1])
    print(f"{name:14s} {level:8s} n={noise} verdicts={dict(ver)} domsets={len(doms)} (top {doms.most_common(1)[0][1]}) bnsets={len(bns)} (top {bns.most_common(1)[0][1]})")
    if why: print("    warn checks:", dict(why.most_common(4)))
    if len(doms) > 1: print("    domains:", dict(doms.most_common(3)))
    if len(bns) > 1: print("    bottlenecks:", [ (k, v) for k, v in bns.most_common(4)])
    sys.stdout.flush()
