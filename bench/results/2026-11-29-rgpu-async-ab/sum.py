import glob,statistics,collections,re
v=collections.defaultdict(list)
for f in glob.glob('/tmp/rab/*-*.txt'):
    tag=f.split('/')[-1].split('-')[0]
    for line in open(f):
        p=line.split()
        if len(p)==8 and p[0].isdigit():
            n=int(p[0]); v[(n,tag,'direct')].append(float(p[5])); v[(n,tag,'queued')].append(float(p[7])); v[(n,tag,'staged')].append(float(p[1])/float(p[2]))
for n in sorted({k[0] for k in v}):
    row=[f"{n:>9}"]
    for m in ('direct','queued'):
        for t in ('base','new'):
            x=v.get((n,t,m))
            row.append(f"{m[0]}-{t} {statistics.median(x):.2f} [{min(x):.2f}-{max(x):.2f}]" if x else f"{m}-{t} -")
    x=v.get((n,'new','staged')); row.append(f"direct/staged(new) {statistics.median(x):.2f}" if x else "")
    print("  ".join(row))
