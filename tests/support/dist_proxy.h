/*
 * dist_proxy.h - a userspace TCP proxy between an observer and a real
 * node's distribution port, that a test can cut and restore: the network
 * blip of a reconnect test, on loopback only.
 *
 * It also serves as the observer's epmd (ERL_EPMD_PORT): every request is
 * forwarded to the machine's epmd, and the answer for the proxied node
 * carries the proxy's port instead of the node's, so that every connection
 * to that node (Giulia's and erl_call's, started after ts_proxy_start) goes
 * through the proxy. The node itself registered with the real epmd before.
 *
 * One proxy per test; it runs a thread of its own until the test ends.
 */
#ifndef GIULIA_TESTS_DIST_PROXY_H
#define GIULIA_TESTS_DIST_PROXY_H

#include "support.h"

/* Starts the proxy for node `n` (already up) and sets ERL_EPMD_PORT to its
 * epmd, in this process (children started later inherit it). Call it
 * before any thread of the test reads the environment. */
void ts_proxy_start(const struct ts_beam *n);
/* Cuts: closes every proxied connection (both ends see the close) and
 * refuses new ones (accepted and closed at once) until ts_proxy_restore. */
void ts_proxy_cut(void);
void ts_proxy_restore(void);
/* Connections accepted so far (for a test to see that a reconnect happened). */
int ts_proxy_accepted(void);

#endif
