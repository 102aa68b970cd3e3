import json,glob,statistics as st,collections
d=collections.defaultdict(list)
for f in glob.glob('bench/results/2026-11-30-net-eager64k/nonexist.json'):
    for x in json.load(open(f)):
        if not x['failed']: d[(x['scenario'],x['benchmark'],x['size'],'before')].append(x['value'])
for f in glob.glob('bench/results/2026-11-30-net-eager64k/after[0-9].json'):
    for x in json.load(open(f)):
        if not x['failed']: d[(x['scenario'],x['benchmark'],x['size'],x['mpi'])].append(x['value'])
keys=sorted(set(k[:3] for k in d))
cols=['before','wharf','mpich','openmpi']
print('%-9s %-11s %8s '%('scenario','bench','size')+' '.join('%9s'%c for c in cols)+'  after/before  after/best-peer')
for k in keys:
    v=[st.median(d[k+(c,)]) if d.get(k+(c,)) else None for c in cols]
    hib = k[1]=='wh_bw'
    peers=[x for x in v[2:] if x]
    best = (max(peers) if hib else min(peers)) if peers else None
    r1 = (v[1]/v[0] if not hib else v[0]/v[1]) if v[0] and v[1] else None
    r2 = (v[1]/best if not hib else best/v[1]) if best and v[1] else None
    print('%-9s %-11s %8d '%k+' '.join('%9.2f'%x if x else '%9s'%'-' for x in v)+'  %6.2f        %6.2f'%(r1 or 0, r2 or 0))
