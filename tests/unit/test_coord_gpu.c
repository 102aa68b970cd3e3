/* The coordinator's device-buffer decisions as pure functions: tuning-file
 * parsing (and its errors), forced schemes, the rendezvous scheme by switch
 * point and the pair's abilities, and the tracer's classification. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "coord/gpu.h"

int main(void)
{
    wh_gsw_t t[WH_GCLASS_MAX], d = {1024, 8192, 4096, 65536, 0};
    t[0] = t[1] = d;
    char err[160] = "";
    /* a file: comments, informational lines, suffixes, never; missing keys keep their values */
    const char *f = "# measured\nwharf-gpu-tuning 1\nmachine vm\nlatency eager_max=2k ipc_min=16k\n"
                    "bandwidth pipeline_min=16384 ipc_min=512K gdr_d2h_max=never\n";
    CHECK(wh_gsw_parse(f, t, err, sizeof err) == 0);
    CHECK(t[0].eager_max == 2048 && t[0].ipc_min == 16384 && t[0].pipe_min == 65536 && t[0].gdr_d2h_max == 1024);
    CHECK(t[1].pipe_min == 16384 && t[1].ipc_min == 512 * 1024 && t[1].gdr_d2h_max == WH_GSW_NEVER &&
          t[1].eager_max == 4096);
    /* errors leave the table alone and name the line */
    wh_gsw_t keep[WH_GCLASS_MAX];
    memcpy(keep, t, sizeof t);
    CHECK(wh_gsw_parse("latency eager_max=1\n", t, err, sizeof err) == -1 && strstr(err, "line 1"));
    CHECK(wh_gsw_parse("wharf-gpu-tuning 1\nlatency eager_max=1x\n", t, err, sizeof err) == -1 &&
          strstr(err, "line 2"));
    CHECK(wh_gsw_parse("wharf-gpu-tuning 1\nfast eager_max=1\n", t, err, sizeof err) == -1 && strstr(err, "class"));
    CHECK(wh_gsw_parse("wharf-gpu-tuning 1\nlatency eagermax=1\n", t, err, sizeof err) == -1);
    CHECK(wh_gsw_parse("wharf-gpu-tuning 2\n", t, err, sizeof err) == -1);
    CHECK(wh_gsw_parse("", t, err, sizeof err) == -1);
    CHECK(!memcmp(keep, t, sizeof t));
    /* what is written is read back */
    char path[] = "/tmp/wh_gsw_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    CHECK(wh_gsw_write(path, t, "# comment\n") == 0);
    FILE *fp = fopen(path, "r");
    char buf[1024] = "";
    size_t n = fp ? fread(buf, 1, sizeof buf - 1, fp) : 0;
    buf[n] = 0;
    if (fp)
        fclose(fp);
    unlink(path);
    wh_gsw_t back[WH_GCLASS_MAX];
    memset(back, 0, sizeof back);
    CHECK(wh_gsw_parse(buf, back, err, sizeof err) == 0 && !memcmp(back, t, sizeof t));

    /* switch points fitted to a measured table: gdrcopy best to 512 B, eager
     * to 4 KiB, staged at 8 KiB, the pipeline 16-64 KiB, IPC from 256 KiB */
    {
        enum { NS = 9 };
        const size_t sz[NS] = {8, 512, 4096, 8192, 16384, 65536, 262144, 1048576, 4194304};
        const double I = INFINITY;
        double tt[WH_DS_MAX * NS] = {
            /* gdr    */ 1, 2, 20, 40, I, I, I, I, I,
            /* eager  */ 5, 6, 8, 30, I, I, I, I, I,
            /* staged */ 20, 20, 21, 22, 40, 100, 300, 1200, 4800,
            /* pipe   */ 30, 30, 30, 30, 32, 60, 120, 400, 1600,
            /* ipc    */ 15, 15, 15, 25, 35, 70, 40, 150, 600,
        };
        wh_gsw_t f;
        wh_gsw_fit(tt, sz, NS, &f);
        CHECK(f.gdr_d2h_max == 512 && f.gdr_h2d_max == 512 && f.eager_max == 4096 && f.pipe_min == 16384 &&
              f.ipc_min == 262144);
        /* one noisy size (IPC 10% behind the pipeline at 1 MiB) does not move
         * the IPC switch past every size beyond it */
        tt[WH_DS_IPC * NS + 7] = 440;
        wh_gsw_fit(tt, sz, NS, &f);
        CHECK(f.ipc_min == 262144 && f.pipe_min == 16384);
        /* without IPC (INFINITY: the pair cannot use it) the pipeline takes over, to the end */
        for (int i = 0; i < NS; i++)
            tt[WH_DS_IPC * NS + i] = I;
        wh_gsw_fit(tt, sz, NS, &f);
        CHECK(f.ipc_min == WH_GSW_NEVER && f.pipe_min == 16384 && f.eager_max == 4096);
        /* nor GDRCopy: no GDRCopy limits */
        for (int i = 0; i < NS; i++)
            tt[WH_DS_GDR * NS + i] = I;
        wh_gsw_fit(tt, sz, NS, &f);
        CHECK(f.gdr_d2h_max == 0 && f.eager_max == 4096);
        /* a pipeline that never wins is switched off */
        for (int i = 0; i < NS; i++)
            tt[WH_DS_PIPE * NS + i] = 1e9;
        wh_gsw_fit(tt, sz, NS, &f);
        CHECK(f.pipe_min == WH_GSW_NEVER && f.eager_max == 4096);
        /* a scheme that takes every rendezvous size switches on at 0 */
        for (int i = 3; i < NS; i++)
            tt[WH_DS_PIPE * NS + i] = 1;
        wh_gsw_fit(tt, sz, NS, &f);
        CHECK(f.pipe_min == 0 && f.eager_max == 4096);
    }

    /* forced schemes */
    wh_gsw_t s[WH_GCLASS_MAX];
    CHECK(wh_gsw_force(s, "pipeline") == 0 && s[0].pipe_min == 0 && s[1].ipc_min == WH_GSW_NEVER &&
          s[0].eager_max == 0);
    CHECK(wh_gsw_rndv(&s[0], 1, 1, 1) == WH_DS_PIPE && wh_gsw_rndv(&s[0], 1 << 20, 1, 0) == WH_DS_STAGED);
    CHECK(wh_gsw_force(s, "ipc") == 0 && wh_gsw_rndv(&s[1], 5, 1, 1) == WH_DS_IPC &&
          wh_gsw_rndv(&s[1], 5, 0, 1) == WH_DS_STAGED);
    CHECK(wh_gsw_force(s, "gdrcopy") == 0 && s[0].gdr_d2h_max == WH_GSW_NEVER && s[0].eager_max == WH_GSW_NEVER);
    CHECK(wh_gsw_force(s, "eager") == 0 && s[0].gdr_h2d_max == 0 && s[0].eager_max == WH_GSW_NEVER);
    CHECK(wh_gsw_force(s, "staged") == 0 && wh_gsw_rndv(&s[0], 1 << 30, 1, 1) == WH_DS_STAGED);
    CHECK(wh_gsw_force(s, "nvlink") == -1);

    /* switch points by class: the paper's example, 64 KiB differs */
    CHECK(wh_gsw_rndv(&t[WH_GCLASS_LAT], 65536, 1, 1) == WH_DS_IPC);
    CHECK(wh_gsw_rndv(&t[WH_GCLASS_BW], 65536, 1, 1) == WH_DS_PIPE);
    CHECK(wh_gsw_rndv(&t[WH_GCLASS_BW], 1 << 20, 1, 1) == WH_DS_IPC);
    CHECK(wh_gsw_rndv(&t[WH_GCLASS_BW], 8192, 1, 1) == WH_DS_STAGED);
    CHECK(wh_gsw_rndv(&t[WH_GCLASS_LAT], 1 << 20, 0, 1) == WH_DS_PIPE); /* IPC impossible: the next scheme */

    /* the tracer: latency until enough messages, then the majority */
    CHECK(wh_gtrace_class(0, 7, 8) == WH_GCLASS_LAT);
    CHECK(wh_gtrace_class(0, 8, 8) == WH_GCLASS_BW);
    CHECK(wh_gtrace_class(5, 4, 8) == WH_GCLASS_LAT);
    CHECK(wh_gtrace_class(4, 5, 8) == WH_GCLASS_BW);
    CHECK(wh_gtrace_class(4, 4, 8) == WH_GCLASS_LAT);
    return DONE();
}
