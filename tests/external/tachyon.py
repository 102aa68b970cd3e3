#!/usr/bin/env python3
"""Run Tachyon, the parallel ray tracer (Debian packages libtachyon-mpich-0: the library built by
Debian against MPICH in three flavours, plain, POSIX threads and OpenMP; tachyon-bin-nox: the
`tachyon-nox` renderer, linked with libtachyon.so.0), unchanged on wharf's libmpich.so.12,
natively or in a container scenario, and compare the images byte for byte with MPICH's.

    tests/external/tachyon.py [--build build] [--scenario native] [-n 4] [--timeout 600]

Tachyon deals the scanlines out over the ranks (MPI_Allgather of node information first), and
every rank sends its rendered lines to rank 0 with persistent requests (MPI_Send_init and
MPI_Recv_init, MPI_Start/MPI_Startall, MPI_Testsome, MPI_Waitall, MPI_Request_free), set up
again for every new scene or resolution.  A scene of 45 objects (a mirror and a glass sphere,
a ring of spheres, a cylinder, a triangle, a checkered plane, two lights) written here is
rendered (1) at 800x600 with each of the three library flavours (the flavour is chosen with a
private libtachyon.so.0 first on LD_LIBRARY_PATH; the OpenMP one with OMP_NUM_THREADS=1: with
two threads a rank it hangs on MPICH 4.0.2 as on wharf, rank 0 in MPI_Waitall on the scanline
receives while the other ranks wait in MPI_Finalize, though its MPI_Start, MPI_Startall,
MPI_Testsome and MPI_Waitall all come from the main thread), (2) as a six-frame camera flight
(`-camfile`, the last frame is kept), (3) at 320x240 with 4x antialiasing and 16-sample ambient
occlusion; and (4) a small C program using Tachyon's API, compiled here with Debian's
mpicc.mpich (needs libtachyon-mpich-0-dev), renders eight frames that change camera,
resolution, antialiasing and scene, and prints a checksum of each (it also calls MPI_Bcast and
MPI_Allreduce itself to check that all ranks agree).  Images without antialiasing come out the
same on any rank count; antialiased ones depend on it (the random jitter follows the rank), so
their references exist for 1 to 4 ranks.  References: the same binaries on MPICH 4.0.2
(mpirun.mpich, Debian 12, tachyon 0.99~b6+dsx-10).  The run passes when every program exits 0,
every image and checksum matches and wharf's channel report comes from every rank.  Exit 77
(skip) when tachyon-nox or the library is missing or the scenario cannot be built; the driver
part is left out (logged) without mpicc.mpich or the -dev package.
"""
import hashlib, math, os, re, shutil, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from extrun import SKIP, app_args, lab_for, log, reports_bad, run, run_mpich, rundir, verdict  # noqa: E402

TACHYON = "/usr/bin/tachyon-nox"
LIBDIR = "/usr/lib/x86_64-linux-gnu"
FLAVOURS = {"plain": "libtachyon-mpich.so.0", "thr": "libtachyon-mpich-thr.so.0",
            "openmp": "libtachyon-mpich-openmp.so.0"}
# sha256 of the PPM images on MPICH
REF_FRAME = "e0ab47b3fbeb4f02c7bd7a5fb934f305302bdb24ef55d34d562b23af12b2fa5a"   # 800x600, any -n
REF_FLIGHT = "42544c9d50156cba94009fc9ba8edfa146ce50f7b10a58d2242b46f9b6981847"  # last frame, any -n
REF_AA = {1: "d9d8881ae2921133ebe1450f146fa06c71b89b3cc19f779ceafc03493bc58adf",
          2: "df10780286c2276a4146eb18c6454ddf143adb82d2b4823a4c0b232662f9226c",
          3: "38a86e10a9b33c7517640949eb2acbcf99c533a368cea7a5264036677e75531e",
          4: "a74e84f805a26be3e1350b130edf60512104b823654592da868dd9809d0369ed"}
# the driver's frame checksums on MPICH: frames 0, 2, 4, 6 (no antialiasing, any -n), then
# frames 1, 3, 5, 7 (antialiased) per rank count
REF_DRIVER_PLAIN = ["f1efe8d495196e58", "3391b0202efa4288", "a655c64c400e1f84", "ef2f3417c383e32c"]
REF_DRIVER_AA = {1: ["de52ac487d82d70a", "c512c872900104fd", "0281fa6dc2895bd3", "7cc33ceeda49c187"],
                 2: ["3a82d1df2ad561fa", "84ba78caf73e3236", "c035c707b0ef7bf4", "20f2b2f9cb7dcbce"],
                 3: ["050152cd88921f0b", "6089bc73ebafcc34", "c33094b6de009699", "b5a67fd623c80bab"],
                 4: ["eeea50633b85f974", "1253f1d1d1af5ddd", "f8e051e49a55f0ec", "e50f0461e25c8670"]}
SCENE_HEAD = """BEGIN_SCENE
  RESOLUTION 480 360

CAMERA
  ZOOM 1.0
  ASPECTRATIO 1.0
  ANTIALIASING 0
  RAYDEPTH 10
  CENTER 0.0 2.0 -9.0
  VIEWDIR 0.0 -0.2 1.0
  UPDIR 0.0 1.0 0.0
END_CAMERA

LIGHT CENTER 6.0 8.0 -6.0 RAD 0.2 COLOR 1.0 1.0 1.0
LIGHT CENTER -6.0 5.0 -3.0 RAD 0.2 COLOR 0.5 0.5 0.6

BACKGROUND 0.05 0.05 0.15

TEXDEF mirror AMBIENT 0.05 DIFFUSE 0.2 SPECULAR 0.8 OPACITY 1.0
  PHONG METAL 0.6 PHONG_SIZE 60
  COLOR 0.9 0.9 0.9 TEXFUNC 0

TEXDEF glass AMBIENT 0.05 DIFFUSE 0.1 SPECULAR 0.3 OPACITY 0.3
  PHONG PLASTIC 0.8 PHONG_SIZE 80
  COLOR 0.6 0.9 1.0 TEXFUNC 0

PLANE CENTER 0.0 -1.0 0.0 NORMAL 0.0 1.0 0.0
  TEXTURE AMBIENT 0.1 DIFFUSE 0.8 SPECULAR 0.1 OPACITY 1.0
  COLOR 1.0 1.0 1.0 TEXFUNC 1 CENTER 0.0 0.0 0.0 ROTATE 0.0 0.0 0.0 SCALE 1.0 1.0 1.0

SPHERE CENTER 0.0 0.5 0.0 RAD 1.5 mirror
SPHERE CENTER -2.5 0.0 -1.5 RAD 1.0 glass
CYLINDER CENTER 3.0 -1.0 1.0 AXIS 0.0 3.0 0.0 RAD 0.5
  TEXTURE AMBIENT 0.1 DIFFUSE 0.7 SPECULAR 0.2 OPACITY 1.0 COLOR 0.2 0.9 0.2 TEXFUNC 0
"""
SCENE_TAIL = """TRI V0 -4.0 -1.0 6.0 V1 4.0 -1.0 6.0 V2 0.0 4.0 7.0
  TEXTURE AMBIENT 0.1 DIFFUSE 0.5 SPECULAR 0.5 OPACITY 1.0 COLOR 0.8 0.4 0.1 TEXFUNC 0
END_SCENE
"""
DRIVER = r"""/* Tiny driver of Tachyon's API (libtachyon-mpich) for MPI ABI checks: renders FRAMES frames of a
   procedural scene, changing camera, resolution and scene object between frames (Tachyon
   rebuilds its persistent MPI requests on a resolution change and on a new scene), and prints
   an FNV-1a checksum of every frame's 24-bit image (gathered on rank 0).  Also calls MPI itself:
   rank 0 broadcasts each checksum and all ranks check they agree (MPI_Allreduce MIN/MAX). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include <tachyon.h>

static void *tex(SceneHandle s, float r, float g, float b, double spec, double opac, int func) {
    apitexture t;
    memset(&t, 0, sizeof t);
    t.col = rt_color(r, g, b);
    t.ambient = 0.1; t.diffuse = 0.7; t.specular = spec; t.opacity = opac;
    t.texturefunc = func;
    t.scale = rt_vector(1, 1, 1);
    return rt_texture(s, &t);
}

static SceneHandle build(int nballs) {
    SceneHandle s = rt_newscene();
    rt_background(s, rt_color(0.05, 0.05, 0.15));
    rt_light(s, tex(s, 1, 1, 1, 0, 1, 0), rt_vector(6, 8, -6), 0.2);
    rt_light(s, tex(s, .5, .5, .6, 0, 1, 0), rt_vector(-6, 5, -3), 0.2);
    rt_plane(s, tex(s, 1, 1, 1, 0.1, 1, 1), rt_vector(0, -1, 0), rt_vector(0, 1, 0));
    rt_sphere(s, tex(s, .9, .9, .9, 0.8, 1, 0), rt_vector(0, 0.5, 0), 1.5);
    rt_sphere(s, tex(s, .6, .9, 1, 0.3, 0.3, 0), rt_vector(-2.5, 0, -1.5), 1.0);
    for (int i = 0; i < nballs; i++) {
        double a = 2 * M_PI * i / nballs;
        rt_sphere(s, tex(s, .5 + .5 * cos(a), .5 + .5 * cos(a + 2.1), .5 + .5 * cos(a + 4.2), 0.3, 1, 0),
                  rt_vector(4 * cos(a), -0.6 + 0.2 * sin(3 * a), 4 * sin(a) + 2), 0.35);
    }
    rt_tri(s, tex(s, .8, .4, .1, 0.5, 1, 0), rt_vector(-4, -1, 6), rt_vector(4, -1, 6), rt_vector(0, 4, 7));
    return s;
}

int main(int argc, char **argv) {
    int frames = argc > 1 ? atoi(argv[1]) : 8;
    int node = rt_initialize(&argc, &argv);      /* MPI_Init inside */
    int rank, size, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank != node) { fprintf(stderr, "rank %d but tachyon node %d\n", rank, node); bad = 1; }
    rt_set_ui_message(NULL);
    SceneHandle s = NULL;
    unsigned char *img = NULL;
    for (int f = 0; f < frames; f++) {
        int xres = f < frames / 2 ? 320 : 400, yres = f < frames / 2 ? 240 : 300;
        if (f % 3 == 0) {                        /* a new scene every third frame */
            if (s) rt_deletescene(s);
            s = build(20 + 10 * f);
        }
        free(img);
        img = calloc((size_t)xres * yres * 3, 1);
        rt_resolution(s, xres, yres);
        rt_rawimage_rgb24(s, img);
        rt_aa_maxsamples(s, f % 2 ? 4 : 0);
        double a = -0.5 + f * 1.0 / frames;
        rt_camera_setup(s, 1.0, 1.0, f % 2 ? 4 : 0, 8, rt_vector(9 * sin(a), 2, -9 * cos(a)),
                        rt_vector(-sin(a), -0.2, cos(a)), rt_vector(0, 1, 0));
        rt_renderscene(s);
        uint64_t h = 1469598103934665603ULL;
        for (size_t i = 0; i < (size_t)xres * yres * 3; i++) { h ^= img[i]; h *= 1099511628211ULL; }
        unsigned long long hb = h, mn, mx;
        MPI_Bcast(&hb, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
        MPI_Allreduce(&hb, &mn, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
        MPI_Allreduce(&hb, &mx, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
        if (mn != mx) bad = 1;
        if (rank == 0) {
            printf("frame %d %dx%d aa=%d checksum %016llx\n", f, xres, yres, f % 2 ? 4 : 0, hb);
            if (f == frames - 1) {               /* last frame also as a PPM file */
                FILE *o = fopen("last.ppm", "wb");
                fprintf(o, "P6\n%d %d\n255\n", xres, yres);
                for (int y = yres - 1; y >= 0; y--) fwrite(img + (size_t)y * xres * 3, 3, xres, o);
                fclose(o);
            }
        }
    }
    rt_deletescene(s);
    free(img);
    int anybad;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) printf("tdriver: %d ranks, %d frames, %s\n", size, frames, anybad ? "FAILED" : "ok");
    rt_finalize();                               /* MPI_Finalize inside */
    return anybad;
}
"""


def scene():
    """The scene file's text: SCENE_HEAD, a ring of 40 coloured spheres, SCENE_TAIL."""
    parts = [SCENE_HEAD]
    for i in range(40):
        a = 2 * math.pi * i / 40
        r, g, b = 0.5 + 0.5 * math.cos(a), 0.5 + 0.5 * math.cos(a + 2.1), 0.5 + 0.5 * math.cos(a + 4.2)
        parts.append(f"SPHERE CENTER {4 * math.cos(a):.4f} {-0.6 + 0.2 * math.sin(3 * a):.4f} "
                     f"{4 * math.sin(a) + 2:.4f} RAD 0.35\n  TEXTURE AMBIENT 0.1 DIFFUSE 0.7 SPECULAR 0.3 "
                     f"OPACITY 1.0 COLOR {r:.3f} {g:.3f} {b:.3f} TEXFUNC 0\n")
    parts.append(SCENE_TAIL)
    return "\n".join(parts)


def camera_flight():
    lines = ["6"]
    for i in range(6):
        a = -0.5 + i * 0.2
        lines.append(f"{9 * math.sin(a):.4f} 2.0 {-9 * math.cos(a):.4f}  {-math.sin(a):.4f} -0.2 "
                     f"{math.cos(a):.4f}  0.0 1.0 0.0")
    return "\n".join(lines) + "\n"


def sha256(path):
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


def mpich_run(argv, n, work, flavour, timeout):
    """The same job on MPICH natively, in work/mpich (the stored references were made on one
    machine; another cpu's libm may round differently): (image directory, output) or None."""
    d = os.path.join(work, "mpich")
    os.makedirs(d, exist_ok=True)
    env = {"OMP_NUM_THREADS": "1"}
    if flavour:
        env["LD_LIBRARY_PATH"] = os.path.join(work, "lib-" + flavour)
    r = run_mpich(n, argv, d, timeout, env)
    return (d, r[1]) if r and r[0] == 0 else None


def driver_sums(out):
    sums = dict(re.findall(r"^frame (\d+) \S+ aa=\d checksum ([0-9a-f]{16})$", out, re.M))
    return [sums.get(str(i)) for i in range(8)]


def main():
    a = app_args(__doc__, "tachyon", "ranks", 4)
    for lib in FLAVOURS.values():
        if not os.path.exists(os.path.join(LIBDIR, lib)):
            log(f"SKIP: {LIBDIR}/{lib} missing (apt-get install libtachyon-mpich-0)")
            return SKIP
    lab_cm = lab_for(TACHYON, "tachyon-bin-nox libtachyon-mpich-0", a.scenario)
    if not lab_cm:
        return SKIP
    build = os.path.abspath(a.build)
    work = rundir(build, a.work, "tachyon", a.scenario)
    with open(os.path.join(work, "scene.dat"), "w") as f:
        f.write(scene())
    with open(os.path.join(work, "flight.cam"), "w") as f:
        f.write(camera_flight())
    for name, lib in FLAVOURS.items():   # libtachyon.so.0 of one flavour
        os.makedirs(os.path.join(work, "lib-" + name))
        os.symlink(os.path.join(LIBDIR, lib), os.path.join(work, "lib-" + name, "libtachyon.so.0"))
    sc = os.path.join(work, "scene.dat")
    jobs = [(f"frame-{name}", name, [TACHYON, sc, "-res", "800", "600", "-format", "PPM",
                                     "-o", f"frame-{name}.ppm"], f"frame-{name}.ppm", REF_FRAME)
            for name in FLAVOURS]
    jobs.append(("flight", "plain", [TACHYON, sc, "-res", "400", "300", "-camfile",
                                     os.path.join(work, "flight.cam"), "-format", "PPM", "-o", "flight.ppm"],
                 "flight.ppm", REF_FLIGHT))
    jobs.append(("antialiased", "plain", [TACHYON, sc, "-res", "320", "240", "-aasamples", "4",
                                          "-add_skylight", "0.7", "-skylight_samples", "16",
                                          "-format", "PPM", "-o", "aa.ppm"], "aa.ppm", REF_AA.get(a.n)))
    mpicc = shutil.which("mpicc.mpich")
    if mpicc and os.path.exists("/usr/include/tachyon.h") and os.path.exists(os.path.join(LIBDIR, "libtachyon-mpich.so")):
        src = os.path.join(work, "tdriver.c")
        with open(src, "w") as f:
            f.write(DRIVER)
        subprocess.run([mpicc, "-O2", "-o", os.path.join(work, "tdriver"), src, "-ltachyon-mpich", "-lm"], check=True)
        jobs.append(("driver", None, [os.path.join(work, "tdriver"), "8"], None, None))
    else:
        log("note: API driver left out (needs mpicc.mpich and libtachyon-mpich-0-dev)")
    bad, outs, summary = [], [], []
    t0 = time.time()
    with lab_cm as lab:
        for name, flavour, argv, image, ref in jobs:
            ldp = os.path.join(build, "lib") + (":" + os.path.join(work, "lib-" + flavour) if flavour else "")
            opts = ["--timeout", str(a.timeout), "-x", "WHARF_REPORT=channels", "-x", "LD_LIBRARY_PATH=" + ldp]
            if flavour == "openmp":   # see the module's doc: more threads hang on MPICH too
                opts += ["-x", "OMP_NUM_THREADS=1"]
            t1 = time.time()
            rc, out = run(lab, build, a.n, argv, opts, work, a.timeout)
            outs.append(f"==== {name}\n{out}")
            problems = ([] if rc == 0 else [f"exit status {rc}"]) + reports_bad(out, a.n)
            if image:
                got = sha256(os.path.join(work, image))
                if got is None:
                    problems.append(f"no image {image}")
                elif ref is None:
                    log(f"note: {name}: no reference image for -n {a.n} (sha256 {got})")
                elif got != ref:
                    m = mpich_run(argv, a.n, work, flavour, a.timeout)
                    live = m and sha256(os.path.join(m[0], image))
                    if got == live:
                        log(f"note: {name}: the stored reference differs on this machine; same image as MPICH's run here")
                    else:
                        problems.append(f"image {image} sha256 {got}, expected {ref} (MPICH here: {live})")
            else:
                got = driver_sums(out)
                if got[0::2] != REF_DRIVER_PLAIN or (a.n in REF_DRIVER_AA and got[1::2] != REF_DRIVER_AA[a.n]):
                    m = mpich_run(argv, a.n, work, None, a.timeout)
                    live = driver_sums(m[1]) if m else None
                    if got == live:
                        log(f"note: {name}: the stored checksums differ on this machine; same as MPICH's run here")
                    else:
                        problems.append(f"frame checksums {got}, expected {REF_DRIVER_PLAIN} / "
                                        f"{REF_DRIVER_AA.get(a.n)} (MPICH here: {live})")
                if not re.search(r"^tdriver: \d+ ranks, 8 frames, ok$", out, re.M):
                    problems.append("driver did not report ok")
            summary.append(f"{name} {time.time() - t1:.1f} s")
            bad += [f"{name}: {p}" for p in problems]
    out = "\n".join(outs)
    with open(os.path.join(work, "tachyon.out"), "w") as f:
        f.write(out)
    return verdict(f"tachyon {a.scenario} (-n {a.n})", bad, out, t0, "; " + ", ".join(summary))


if __name__ == "__main__":
    sys.exit(main())
