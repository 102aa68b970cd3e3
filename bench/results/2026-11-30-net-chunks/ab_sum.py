import collections,statistics,sys
d=collections.defaultdict(lambda: collections.defaultdict(list))
for l in open(sys.argv[1]):
    f=l.split(); v=f[0]; xs=f[1:]
    for i in range(0,len(xs),2): d[v][int(xs[i])].append(float(xs[i+1]))
A,B=list(d)[:2]
print("size", A, B, "B/A")
for sz in sorted(d[A]):
    a=statistics.median(d[A][sz]); b=statistics.median(d[B][sz])
    print(sz, round(a,1), round(b,1), round(b/a,2), "n=%d" % len(d[B][sz]))
