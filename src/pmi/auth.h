/* Authentication of PMI connections over TCP (wharfrun's remote ranks).
 *
 * wharfrun draws a per-job secret (64 hex digits from the kernel's random
 * source) and hands it to each remote rank in WHARF_PMI_SECRET, through the
 * agent's stdin (never a command line).  A TCP connection then proves it
 * knows the secret before it is bound to a rank:
 *
 *   client: cmd=auth_hello pmiid=ID cnonce=C       (C: 32 hex digits, fresh)
 *   server: cmd=auth_challenge snonce=S            (S: 32 hex digits, fresh)
 *   client: cmd=auth_response mac=HMAC(secret, "wharf-pmi-auth-v1 client ID S C")
 *   server: cmd=auth_ok mac=HMAC(secret, "wharf-pmi-auth-v1 server ID S C")
 *           then the initack replies (cmd=initack, cmd=set size/rank/debug)
 *
 * MACs are HMAC-SHA256 in lower-case hex, compared in constant time.  A
 * wrong MAC, an unknown or already claimed ID, or any other line closes the
 * connection.  The server's MAC lets the client check it talks to its own
 * launcher.  Without WHARF_PMI_SECRET the client speaks plain PMI-1 (hydra's
 * cmd=initack), which wharfrun refuses. */
#ifndef WH_PMI_AUTH_H
#define WH_PMI_AUTH_H
#include <stddef.h>

#define WH_PMI_SECRET_VAR "WHARF_PMI_SECRET"
#define WH_PMI_SECRET_HEX 64 /* hex digits of the secret */
#define WH_PMI_NONCE_HEX 32  /* hex digits of a nonce */
#define WH_PMI_MAC_HEX 64

/* n random bytes from getrandom() or /dev/urandom as 2n hex digits + NUL.
 * 0, or -1 if the kernel gave none (never a weaker fallback). */
int wh_pmi_random_hex(char *out, size_t nbytes);
/* 1 if s is exactly n lower-case hex digits. */
int wh_pmi_is_hex(const char *s, size_t n);
/* MAC of role ("client" or "server") for this exchange, as hex into out. */
void wh_pmi_auth_mac(const char *secret, const char *role, int pmiid, const char *snonce,
                     const char *cnonce, char out[WH_PMI_MAC_HEX + 1]);
/* 1 if mac (untrusted) is the MAC of role; constant time in the MAC. */
int wh_pmi_auth_check(const char *secret, const char *role, int pmiid, const char *snonce,
                      const char *cnonce, const char *mac);
#endif
