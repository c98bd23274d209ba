/*
 * epmd.h - the one epmd request the observer needs (PORT_PLEASE2), with a
 * deadline, so that "epmd is not there" and "epmd does not know the node"
 * are two different errors. Thread-safe (no shared state).
 */
#ifndef GIULIA_OBSERVE_EPMD_H
#define GIULIA_OBSERVE_EPMD_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

struct epmd_port_reply {
	int port;
	int node_type; /* 77: normal node, 72: hidden */
	int protocol;
	int highest_version;
	int lowest_version;
};

/* Asks epmd at addr:epmd_port for the distribution port of `alive`.
 * GI_EEPMD when epmd cannot be reached before `deadline_ms` (monotonic),
 * GI_ENONODE when it does not know `alive`, GI_EPARSE on a malformed reply. */
int epmd_port_please(const struct in_addr *addr, int epmd_port, const char *alive,
                     int64_t deadline_ms, struct epmd_port_reply *out);

/* Parses a PORT2_RESP of `len` bytes (exposed for tests and fuzzing).
 * Returns 0, GI_ENONODE (result byte not 0) or GI_EPARSE. */
int epmd_port_reply_parse(const unsigned char *data, size_t len, struct epmd_port_reply *out);

#endif
