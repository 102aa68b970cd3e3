/* wharf-gpud: serves the GPUs of this machine's CUDA driver (libcuda.so.1:
 * the real one or the emulator) to authenticated remote clients (the rgpu
 * client driver, docs/RGPU.md).  One forked process per client: its own
 * driver instance and contexts, freed entirely when the client goes away.
 *
 *   wharf-gpud [--listen ADDR:PORT] [--secret-file F] [--max-clients N]
 *              [--max-mem BYTES] [--max-handles N] [--timeout S]
 *              [--port-file F] [-v]
 * The parent never touches the driver (CUDA does not survive fork). */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rgpu/gpud.h"
#include "rgpu/rg_wire.h"

static volatile sig_atomic_t stop;
static void on_term(int sig)
{
    (void)sig;
    stop = 1;
}

static void usage(void)
{
    fprintf(stderr, "usage: wharf-gpud [--listen ADDR:PORT] [--secret-file F] [--max-clients N] [--max-mem BYTES]\n"
                    "                  [--max-handles N] [--timeout S] [--port-file F] [-v]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    gpud_cfg_t cfg = {0};
    cfg.max_handles = 1024;
    cfg.timeout_ms = 30000;
    const char *listen_at = "0.0.0.0:7077", *secret_file = NULL, *port_file = NULL;
    int max_clients = 64;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-v")) {
            cfg.verbose = 1;
            continue;
        }
        if (!v)
            usage();
        i++;
        if (!strcmp(a, "--listen"))
            listen_at = v;
        else if (!strcmp(a, "--secret-file"))
            secret_file = v;
        else if (!strcmp(a, "--port-file"))
            port_file = v;
        else if (!strcmp(a, "--max-clients"))
            max_clients = atoi(v);
        else if (!strcmp(a, "--max-mem"))
            cfg.max_mem = strtoull(v, NULL, 0);
        else if (!strcmp(a, "--max-handles"))
            cfg.max_handles = atoi(v);
        else if (!strcmp(a, "--timeout"))
            cfg.timeout_ms = atoi(v) * 1000;
        else
            usage();
    }
    if (max_clients < 1 || cfg.max_handles < 4 || cfg.max_handles > 65536 || cfg.timeout_ms < 1000)
        usage();
    char err[256], host[128];
    int port;
    if (rg_secret_load(secret_file, cfg.key, &cfg.keylen, err, sizeof err)) {
        fprintf(stderr, "wharf-gpud: %s\n", err);
        return 1;
    }
    if (rg_split_hostport(listen_at, host, sizeof host, &port) && strcmp(listen_at + strlen(listen_at) - 2, ":0")) {
        fprintf(stderr, "wharf-gpud: --listen wants ADDR:PORT, not %s\n", listen_at);
        return 1;
    }
    if (!strcmp(listen_at + strlen(listen_at) - 2, ":0")) {
        snprintf(host, sizeof host, "%.*s", (int)strlen(listen_at) - 2, listen_at);
        port = 0;
    }
    int bound = 0;
    int lfd = rg_listen(host, port, &bound);
    if (lfd < 0) {
        fprintf(stderr, "wharf-gpud: cannot listen on %s: %s\n", listen_at, strerror(errno));
        return 1;
    }
    if (port_file) {
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "%s.tmp", port_file);
        FILE *f = fopen(tmp, "w");
        if (!f || fprintf(f, "%d\n", bound) < 0 || fclose(f) || rename(tmp, port_file)) {
            fprintf(stderr, "wharf-gpud: cannot write %s\n", port_file);
            return 1;
        }
    }
    fprintf(stderr, "wharf-gpud: listening on %s port %d (pid %d)\n", host, bound, (int)getpid());
    struct sigaction sa = {0};
    sa.sa_handler = on_term;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    int nclients = 0, next_id = 1;
    pid_t *kids = calloc((size_t)max_clients, sizeof *kids);
    if (!kids)
        return 1;
    while (!stop) {
        for (;;) { /* reap sessions */
            int st;
            pid_t p = waitpid(-1, &st, WNOHANG);
            if (p <= 0)
                break;
            nclients--;
            for (int k = 0; k < max_clients; k++)
                if (kids[k] == p)
                    kids[k] = 0;
            GPUD_LOG(&cfg, "session process %d ended (%s %d)\n", (int)p, WIFEXITED(st) ? "exit" : "signal",
                     WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
        }
        struct pollfd pf = {lfd, POLLIN, 0};
        if (poll(&pf, 1, 200) <= 0)
            continue;
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        if (nclients >= max_clients) {
            GPUD_LOG(&cfg, "refusing a client: %d sessions already (--max-clients)\n", nclients);
            close(fd);
            continue;
        }
        rg_tcp_tune(fd);
        int id = next_id++;
        pid_t pid = fork();
        if (pid == 0) {
            close(lfd);
            prctl(PR_SET_PDEATHSIG, SIGKILL); /* the daemon gone = its sessions gone */
            signal(SIGTERM, SIG_DFL);
            signal(SIGINT, SIG_DFL);
            _exit(gpud_session(fd, &cfg, id));
        }
        close(fd);
        if (pid > 0) {
            nclients++;
            for (int k = 0; k < max_clients; k++)
                if (!kids[k]) {
                    kids[k] = pid;
                    break;
                }
            GPUD_LOG(&cfg, "session %d: process %d\n", id, (int)pid);
        }
    }
    close(lfd);
    for (int k = 0; k < max_clients; k++)
        if (kids[k] > 0)
            kill(kids[k], SIGTERM);
    free(kids);
    return 0;
}
