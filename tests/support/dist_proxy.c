/*
 * dist_proxy.c - a cuttable TCP proxy in front of a node's distribution
 * port, with an epmd that points at it (see dist_proxy.h). Loopback only.
 * needs: erlang-base
 */
#include "dist_proxy.h"

#include <errno.h>
#include <stdbool.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"

#define PROXY_PAIRS    64
#define EPMD_REPLY_MAX 1024

struct proxy {
	int listen_fd, epmd_fd;
	int node_port, real_epmd_port, proxy_port;
	char alive[256];
	int client[PROXY_PAIRS], upstream[PROXY_PAIRS];
	atomic_bool cut;
	atomic_int accepted;
	pthread_t thread;
};

static struct proxy P;

static int atoi_port(const char *s)
{
	char *end = NULL;
	long v = strtol(s, &end, 10);
	return end && *end == '\0' && v > 0 && v < 65536 ? (int)v : 0;
}

static int listen_loopback(int *port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 16) != 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) != 0)
		th_fail(__FILE__, __LINE__, "proxy: cannot listen: %s", strerror(errno));
	*port = ntohs(a.sin_port);
	return fd;
}

static int connect_loopback(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET,
	                        .sin_port = htons((uint16_t)port),
	                        .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0)
		return fd;
	if (fd >= 0)
		close(fd);
	return -1;
}

/* Reads until `fd` closes, `size` bytes or 2 s of silence. */
static size_t read_all(int fd, unsigned char *buf, size_t size)
{
	size_t got = 0;
	while (got < size) {
		struct pollfd p = {fd, POLLIN, 0};
		if (poll(&p, 1, 2000) != 1)
			break;
		ssize_t n = read(fd, buf + got, size - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	return got;
}

/* An epmd request: u16 length, then that many bytes; returns all of it. */
static size_t read_request(int fd, unsigned char *buf, size_t size)
{
	size_t got = 0;
	while (got < size) {
		size_t want = got < 2 ? 2 : 2 + (((size_t)buf[0] << 8) | buf[1]);
		if (want > size)
			return 0;
		if (got >= want)
			break;
		struct pollfd p = {fd, POLLIN, 0};
		if (poll(&p, 1, 2000) != 1)
			return 0;
		ssize_t n = read(fd, buf + got, want - got);
		if (n <= 0)
			return 0;
		got += (size_t)n;
	}
	return got;
}

static void write_all(int fd, const unsigned char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);
		if (n <= 0)
			return;
		buf += n;
		len -= (size_t)n;
	}
}

/* One epmd request: {u16 length, body}. PORT_PLEASE2 ('z' NAME) for the
 * proxied node answers 'w', 0, u16 port, ...: the port is rewritten. */
static int epmd_ask(const unsigned char *req, size_t req_len, unsigned char *reply,
                    size_t *reply_len)
{
	int up = connect_loopback(P.real_epmd_port);
	if (up < 0)
		return -1;
	write_all(up, req, req_len);
	*reply_len = read_all(up, reply, EPMD_REPLY_MAX);
	close(up);
	return 0;
}

static void epmd_serve(int fd)
{
	unsigned char req[512], reply[EPMD_REPLY_MAX];
	size_t got = read_request(fd, req, sizeof(req));
	size_t reply_len = 0;
	if (got >= 3 && epmd_ask(req, got, reply, &reply_len) == 0) {
		size_t name_len = got - 3;
		bool ours = req[2] == 'z' && name_len == strlen(P.alive) &&
		            memcmp(req + 3, P.alive, name_len) == 0;
		if (ours && reply_len >= 4 && reply[0] == 'w' && reply[1] == 0) {
			reply[2] = (unsigned char)(P.proxy_port >> 8);
			reply[3] = (unsigned char)(P.proxy_port & 0xff);
		}
		write_all(fd, reply, reply_len);
	}
	close(fd);
}

static void pair_close(int i)
{
	close(P.client[i]);
	close(P.upstream[i]);
	P.client[i] = P.upstream[i] = -1;
}

static void proxy_accept(void)
{
	int fd = accept4(P.listen_fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	atomic_fetch_add(&P.accepted, 1);
	int up = atomic_load(&P.cut) ? -1 : connect_loopback(P.node_port);
	int slot = -1;
	for (int i = 0; i < PROXY_PAIRS && slot < 0 && up >= 0; i++)
		if (P.client[i] < 0)
			slot = i;
	if (slot < 0) {
		close(fd);
		if (up >= 0)
			close(up);
		return;
	}
	P.client[slot] = fd;
	P.upstream[slot] = up;
}

/* Moves what is readable on `from` to `to`; false when `from` closed. */
static bool forward(int from, int to)
{
	unsigned char buf[16384];
	ssize_t n = read(from, buf, sizeof(buf));
	if (n <= 0)
		return false;
	write_all(to, buf, (size_t)n);
	return true;
}

static void *proxy_main(void *arg)
{
	(void)arg;
	for (;;) {
		if (atomic_load(&P.cut))
			for (int i = 0; i < PROXY_PAIRS; i++)
				if (P.client[i] >= 0)
					pair_close(i);
		struct pollfd fds[2 + 2 * PROXY_PAIRS];
		int slot_of[2 + 2 * PROXY_PAIRS];
		int k = 0;
		fds[k++] = (struct pollfd){P.listen_fd, POLLIN, 0};
		fds[k++] = (struct pollfd){P.epmd_fd, POLLIN, 0};
		for (int i = 0; i < PROXY_PAIRS; i++) {
			if (P.client[i] < 0)
				continue;
			slot_of[k] = i;
			fds[k++] = (struct pollfd){P.client[i], POLLIN, 0};
			slot_of[k] = i;
			fds[k++] = (struct pollfd){P.upstream[i], POLLIN, 0};
		}
		if (poll(fds, (nfds_t)k, 20) <= 0)
			continue;
		if (fds[0].revents)
			proxy_accept();
		if (fds[1].revents) {
			int fd = accept4(P.epmd_fd, NULL, NULL, SOCK_CLOEXEC);
			if (fd >= 0)
				epmd_serve(fd);
		}
		for (int j = 2; j < k; j++) {
			int i = slot_of[j];
			if (!fds[j].revents || P.client[i] < 0)
				continue;
			bool from_client = fds[j].fd == P.client[i];
			if (!forward(fds[j].fd, from_client ? P.upstream[i] : P.client[i]))
				pair_close(i);
		}
	}
	return NULL;
}

/* The node's distribution port, from the machine's epmd. */
static int node_port_of(void)
{
	unsigned char req[300], reply[EPMD_REPLY_MAX];
	size_t n = strlen(P.alive);
	req[0] = (unsigned char)((n + 1) >> 8);
	req[1] = (unsigned char)((n + 1) & 0xff);
	req[2] = 'z';
	memcpy(req + 3, P.alive, n);
	size_t reply_len = 0;
	if (epmd_ask(req, n + 3, reply, &reply_len) != 0 || reply_len < 4 || reply[0] != 'w' ||
	    reply[1] != 0)
		th_fail(__FILE__, __LINE__, "proxy: epmd does not know %s", P.alive);
	return (reply[2] << 8) | reply[3];
}

void ts_proxy_start(const struct ts_beam *n)
{
	memset(&P, 0, sizeof(P));
	for (int i = 0; i < PROXY_PAIRS; i++)
		P.client[i] = P.upstream[i] = -1;
	const char *at = strchr(n->name, '@');
	size_t len = at ? (size_t)(at - n->name) : strlen(n->name);
	if (len >= sizeof(P.alive))
		th_fail(__FILE__, __LINE__, "proxy: node name too long");
	memcpy(P.alive, n->name, len);
	const char *env = getenv("ERL_EPMD_PORT");
	P.real_epmd_port = env && atoi_port(env) > 0 ? atoi_port(env) : 4369;
	P.node_port = node_port_of();
	P.listen_fd = listen_loopback(&P.proxy_port);
	int epmd_port = 0;
	P.epmd_fd = listen_loopback(&epmd_port);
	if (pthread_create(&P.thread, NULL, proxy_main, NULL) != 0)
		th_fail(__FILE__, __LINE__, "proxy: no thread");
	pthread_detach(P.thread);
	char port[16];
	snprintf(port, sizeof(port), "%d", epmd_port);
	setenv("ERL_EPMD_PORT", port, 1);
}

void ts_proxy_cut(void)
{
	atomic_store(&P.cut, true);
}

void ts_proxy_restore(void)
{
	atomic_store(&P.cut, false);
}

int ts_proxy_accepted(void)
{
	return atomic_load(&P.accepted);
}
