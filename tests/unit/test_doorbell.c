/* The doorbell protocol (src/chan/shm/doorbell.h) between processes: a
 * sleeper and two wakers share one anonymous MAP_SHARED page (a shared
 * futex, as in the node region).  Round k: a waker publishes `posted = k`
 * and rings; the sleeper waits for it, arming the doorbell and sleeping
 * (bounded) whenever the round has not arrived yet.  The wakers vary the
 * delay before they post so the sleeper's arm/second look/FUTEX_WAIT races
 * the post in every phase.  A sleep that ends by timeout although the
 * round was posted long before is a lost wake-up: with a 2 s bound a lost
 * one is unmistakable, and none may occur.  Also: a timeout nobody rings
 * lasts its bound; a ring while nobody sleeps makes no system call; a ring
 * before the FUTEX_WAIT (after the arm) is not lost; freed room (WH_DB_SPACE)
 * wakes only a sleeper that asked for it. */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "chan/shm/doorbell.h"
#include "check.h"

#define ROUNDS 20000
#define NAP_US 2000000L /* a lost wake-up costs the whole bound */

typedef struct shared {
    wh_db_t db;
    _Alignas(64) volatile uint64_t posted;   /* last round posted (by a waker) */
    _Alignas(64) volatile uint64_t consumed; /* last round the sleeper saw */
    _Alignas(64) volatile uint64_t post_ns[2];
} shared_t;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void spin_ns(uint64_t ns)
{
    uint64_t t = now_ns();
    while (now_ns() - t < ns)
        ;
}

/* waker w posts rounds k with k % 2 == w, each once the previous was seen */
static void waker(shared_t *s, int w)
{
    unsigned x = 12345u + (unsigned)w;
    if (wh_db_setup() != 0)
        fprintf(stderr, "waker %d: membarrier not available, wakers fence\n", w);
    for (uint64_t k = (uint64_t)w + 1; k <= ROUNDS; k += 2) {
        uint64_t waited = 0;
        while (__atomic_load_n(&s->consumed, __ATOMIC_ACQUIRE) < k - 1)
            if (++waited > 1000)
                sched_yield();
        x = x * 1103515245u + 12345u;
        unsigned r = (x >> 16) % 8;
        if (r < 4)
            spin_ns((uint64_t)r * 3000); /* 0-9 us: races the sleeper's arm */
        else if (r == 4)
            sched_yield();
        /* r > 4: at once */
        __atomic_store_n(&s->post_ns[w], now_ns(), __ATOMIC_RELAXED);
        __atomic_store_n(&s->posted, k, __ATOMIC_RELEASE);
        wh_db_ring(&s->db, WH_DB_ASLEEP);
    }
    _exit(0);
}

int main(void)
{
    shared_t *s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(s != MAP_FAILED);
    if (s == MAP_FAILED)
        return DONE();
    memset(s, 0, sizeof *s);
    int mb = wh_db_setup();
    printf("membarrier %s\n", mb == 0 ? "registered" : "unavailable: wakers fence");

    /* a sleep nobody rings lasts its bound, and the flag is down after it */
    uint64_t t0 = now_ns();
    uint32_t a = wh_db_arm(&s->db, 0);
    CHECK(a & WH_DB_ASLEEP);
    CHECK(wh_db_wait(&s->db, a, 20000) == 0);
    uint64_t dt = now_ns() - t0;
    CHECK(dt >= 19000000u && dt < 2000000000u);
    CHECK((s->db.word & WH_DB_ASLEEP) == 0);

    /* rung between the arm and the wait: the wait returns at once, woken */
    a = wh_db_arm(&s->db, 0);
    wh_db_ring(&s->db, WH_DB_ASLEEP);
    CHECK((s->db.word & WH_DB_ASLEEP) == 0);
    t0 = now_ns();
    CHECK(wh_db_wait(&s->db, a, NAP_US) == 1);
    CHECK(now_ns() - t0 < NAP_US * 500u); /* far below the bound */
    CHECK((s->db.word & WH_DB_ASLEEP) == 0);

    /* nobody asleep: rings make no wake-up (no system call) */
    uint32_t wakes0 = s->db.wakes, seq0 = s->db.word;
    for (int i = 0; i < 1000; i++)
        wh_db_ring(&s->db, WH_DB_ASLEEP);
    CHECK(s->db.wakes == wakes0 && s->db.word == seq0);

    /* freed room wakes only a sleeper that asked for it */
    a = wh_db_arm(&s->db, 0);
    wh_db_ring(&s->db, WH_DB_SPACE);
    CHECK(s->db.word == a);
    CHECK(wh_db_wait(&s->db, a, 1000) == 0);
    a = wh_db_arm(&s->db, 1);
    CHECK((a & WH_DB_FLAGS) == WH_DB_FLAGS);
    wh_db_ring(&s->db, WH_DB_SPACE);
    CHECK(wh_db_wait(&s->db, a, NAP_US) == 1);
    CHECK((s->db.word & WH_DB_FLAGS) == 0);

    /* disarm without sleeping */
    a = wh_db_arm(&s->db, 1);
    wh_db_disarm(&s->db);
    CHECK((s->db.word & WH_DB_FLAGS) == 0);

    /* the race, many rounds, two wakers */
    s->db.naps = s->db.wakes = 0;
    pid_t kids[2];
    for (int w = 0; w < 2; w++) {
        kids[w] = fork();
        CHECK(kids[w] >= 0);
        if (kids[w] == 0)
            waker(s, w);
    }
    unsigned long sleeps = 0, rung = 0, lost = 0;
    uint64_t worst = 0, t_start = now_ns();
    for (uint64_t k = 1; k <= ROUNDS; k++) {
        unsigned spins = 0;
        while (__atomic_load_n(&s->posted, __ATOMIC_ACQUIRE) < k) {
            if (++spins < 50)
                continue;
            uint32_t armed = wh_db_arm(&s->db, 0);
            if (__atomic_load_n(&s->posted, __ATOMIC_ACQUIRE) >= k) { /* the second look */
                wh_db_disarm(&s->db);
                break;
            }
            sleeps++;
            uint64_t ts = now_ns();
            int woke = wh_db_wait(&s->db, armed, NAP_US);
            uint64_t te = now_ns(), slept = te - ts;
            rung += (unsigned long)woke;
            if (slept > worst)
                worst = slept;
            if (!woke && __atomic_load_n(&s->posted, __ATOMIC_ACQUIRE) >= k) {
                /* timed out with the round there: lost if it was posted well before the timeout */
                uint64_t p = __atomic_load_n(&s->post_ns[(k - 1) % 2], __ATOMIC_RELAXED);
                if (p + 100000000u < te) {
                    lost++;
                    fprintf(stderr, "round %llu: lost wake-up (posted %.1f ms before the timeout)\n",
                            (unsigned long long)k, (double)(te - p) / 1e6);
                }
            }
        }
        __atomic_store_n(&s->consumed, k, __ATOMIC_RELEASE);
    }
    double secs = (double)(now_ns() - t_start) / 1e9;
    for (int w = 0; w < 2; w++) {
        int st = -1;
        CHECK(waitpid(kids[w], &st, 0) == kids[w] && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    printf("%d rounds in %.2f s: %lu sleeps, %lu woken by a ring, %u futex wakes, %lu lost, longest sleep %.3f ms\n",
           ROUNDS, secs, sleeps, rung, s->db.wakes, lost, (double)worst / 1e6);
    CHECK(lost == 0);
    CHECK(sleeps > 100); /* the race was run, not skipped */
    CHECK((s->db.word & WH_DB_ASLEEP) == 0);
    munmap(s, sizeof *s);
    return DONE();
}
