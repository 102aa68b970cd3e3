#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "util/tunables.h"

int main(void)
{
    size_t sz;
    int i;
    CHECK(wh_tunable_parse(WH_TT_SIZE, "8k", &sz) == 0 && sz == 8192);
    CHECK(wh_tunable_parse(WH_TT_SIZE, "2M", &sz) == 0 && sz == 2u << 20);
    CHECK(wh_tunable_parse(WH_TT_SIZE, "1g", &sz) == 0 && sz == 1u << 30);
    CHECK(wh_tunable_parse(WH_TT_SIZE, "17kb", &sz) == 0 && sz == 17u << 10);
    CHECK(wh_tunable_parse(WH_TT_SIZE, "-1", &sz) != 0);
    CHECK(wh_tunable_parse(WH_TT_SIZE, "12q", &sz) != 0);
    CHECK(wh_tunable_parse(WH_TT_SIZE, "", &sz) != 0);
    CHECK(wh_tunable_parse(WH_TT_SIZE, "99999999999999999999", &sz) != 0);
    CHECK(wh_tunable_parse(WH_TT_INT, "42", &i) == 0 && i == 42);
    CHECK(wh_tunable_parse(WH_TT_INT, "0x10", &i) == 0 && i == 16);
    CHECK(wh_tunable_parse(WH_TT_INT, "4x", &i) != 0);
    CHECK(wh_tunable_parse(WH_TT_INT, "99999999999", &i) != 0);
    CHECK(wh_tunable_parse(WH_TT_BOOL, "yes", &i) == 0 && i == 1);
    CHECK(wh_tunable_parse(WH_TT_BOOL, "off", &i) == 0 && i == 0);
    CHECK(wh_tunable_parse(WH_TT_BOOL, "maybe", &i) != 0);

    /* every default parses, names are unique and documented */
    for (int k = 0; k < wh_tunable_count; k++) {
        const wh_tunable_desc_t *d = &wh_tunable_descs[k];
        char buf[64];
        CHECK(wh_tunable_parse(d->type, d->def, buf) == 0);
        CHECK(d->doc && strlen(d->doc) > 10);
        for (int j = 0; j < k; j++)
            CHECK(strcmp(d->name, wh_tunable_descs[j].name) != 0);
    }

    /* environment overrides, bad values fall back to the default with an error */
    char err[256];
    CHECK(wh_tunables_load(err, sizeof err) == 0);
    for (int k = 0; k < wh_tunable_count; k++) { /* "64k" is 65536: still the default */
        char env[96];
        snprintf(env, sizeof env, "WHARF_%s", wh_tunable_descs[k].name);
        if (!getenv(env)) /* (ctest sets a few) */
            CHECK(wh_tunable_is_default(&wh_tunable_descs[k]));
    }
    setenv("WHARF_SHM_EAGER_MAX", "4k", 1);
    setenv("WHARF_SPIN_COUNT", "12", 1);
    CHECK(wh_tunables_load(err, sizeof err) == 0);
    CHECK(wh_tun.shm_eager_max == 4096 && wh_tun.spin_count == 12);
    for (int k = 0; k < wh_tunable_count; k++)
        if (!strcmp(wh_tunable_descs[k].name, "SPIN_COUNT") || !strcmp(wh_tunable_descs[k].name, "SHM_EAGER_MAX"))
            CHECK(!wh_tunable_is_default(&wh_tunable_descs[k]));
    setenv("WHARF_SPIN_COUNT", "lots", 1);
    CHECK(wh_tunables_load(err, sizeof err) != 0);
    CHECK(strstr(err, "WHARF_SPIN_COUNT") != NULL);
    CHECK(wh_tun.spin_count == atoi(wh_tunable_descs[0].def) || wh_tun.spin_count == 2000);
    return DONE();
}
