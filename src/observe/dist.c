/*
 * dist.c - Distributed Erlang connections with deadlines (see dist.h).
 *
 * epmd is asked by this file itself (epmd.c) rather than through ei, so that
 * "no epmd" and "no such node" are told apart and bounded by our deadline;
 * ei then connects to the port epmd gave (ei_xconnect_host_port_tmo) and does
 * the handshake. Every wait goes through ei's _tmo functions with the time
 * left until the operation's deadline, never 0 (which ei reads as forever).
 *
 * Invariant: the cookie lives only in struct dist_conn (and ei's ei_cnode,
 * inside the same struct) and is wiped by dist_close; no function here
 * formats it into a message.
 */
#include "observe/dist.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/fs.h"
#include "base/log.h"
#include "base/str.h"
#include "observe/epmd.h"
#include "observe/observe_int.h"
#include "probes.h"

static pthread_once_t ei_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t name_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long name_counter;
static char name_base[48]; /* under name_lock; "" until set or first used */

#define NAME_SLOTS 32
/* A slot released less than this long ago is waited for: the node may not
 * have seen its last connection end yet, and would answer "alive". */
#define NAME_COOL_MS 200

static void ei_start(void)
{
	ei_init();
}

unsigned dist_ms_left(int64_t deadline_ms)
{
	int64_t left = deadline_ms - gi_clock_mono_ms();
	if (left <= 0)
		return 0;
	return left > 0x7fffffff ? 0x7fffffff : (unsigned)left;
}

/* Splits "alive@host" into its parts; GI_EINVAL when malformed. */
static int node_name_split(const char *node, char *alive, size_t alive_size, char *host,
                           size_t host_size)
{
	const char *at = node ? strchr(node, '@') : NULL;
	if (!at || at == node || at[1] == '\0' || strchr(at + 1, '@'))
		return GI_EINVAL;
	size_t alen = (size_t)(at - node);
	if (alen >= alive_size || strlen(at + 1) >= host_size)
		return GI_EINVAL;
	for (size_t i = 0; i < alen; i++) {
		char ch = node[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '_' || ch == '-'))
			return GI_EINVAL;
	}
	memcpy(alive, node, alen);
	alive[alen] = '\0';
	gi_strlcpy(host, at + 1, host_size);
	for (const char *p = host; *p; p++)
		if (*p == ' ' || *p == '/' || (unsigned char)*p < 0x20)
			return GI_EINVAL;
	return 0;
}

/* Reads the cookie: explicit, else $GIULIA_COOKIE, else ~/.erlang.cookie.
 * GI_ENOCOOKIE when none of the three gives one (a missing, unreadable or
 * empty file included); GI_EINVAL when the one given is too long. */
static int cookie_resolve(const char *given, char *out, size_t size)
{
	if (given && *given)
		return gi_strlcpy(out, given, size) == 0 ? 0 : GI_EINVAL;
	const char *env = getenv("GIULIA_COOKIE");
	if (env && *env)
		return gi_strlcpy(out, env, size) == 0 ? 0 : GI_EINVAL;
	const char *home = getenv("HOME");
	if (!home || !*home)
		return GI_ENOCOOKIE;
	char path[4096];
	snprintf(path, sizeof(path), "%s/.erlang.cookie", home);
	char *data = NULL;
	size_t len = 0;
	if (gi_fs_read_file(path, size - 1, &data, &len) != 0)
		return GI_ENOCOOKIE;
	while (len > 0 && (data[len - 1] == '\n' || data[len - 1] == '\r' || data[len - 1] == ' '))
		len--;
	data[len] = '\0';
	int rc = len > 0 ? gi_strlcpy(out, data, size) : GI_ENOCOOKIE;
	memset(data, 0, len);
	gi_free(data);
	return rc == 0 ? 0 : rc == GI_ENOCOOKIE ? GI_ENOCOOKIE : GI_EINVAL;
}

/* ---- handshake probe ----
 *
 * ei reports every handshake failure but a timeout or a refused connection
 * as EIO, whatever the stage. When that happens, a second, cheap connection
 * finds the stage: it sends our name (the version 6 'N' message, as ei does),
 * reads the status and waits for the node's challenge, then closes without
 * answering it. A node that sends its challenge to the probe accepted the
 * name, so the failure was the challenge reply: the cookie. A status of
 * not_allowed means the node refused our name (its allow list or naming
 * mode); a close before the challenge is a handshake closed by the peer. The
 * target only sees one more connection that ends before the challenge reply
 * (no log, no state). */

#define DFLAG_EXTENDED_REFERENCES 0x4ULL
#define DFLAG_DIST_MONITOR        0x8ULL
#define DFLAG_FUN_TAGS            0x10ULL
#define DFLAG_NEW_FUN_TAGS        0x80ULL
#define DFLAG_EXTENDED_PIDS_PORTS 0x100ULL
#define DFLAG_EXPORT_PTR_TAG      0x200ULL
#define DFLAG_BIT_BINARIES        0x400ULL
#define DFLAG_NEW_FLOATS          0x800ULL
#define DFLAG_SMALL_ATOM_TAGS     0x4000ULL
#define DFLAG_UTF8_ATOMS          0x10000ULL
#define DFLAG_MAP_TAG             0x20000ULL
#define DFLAG_BIG_CREATION        0x40000ULL
#define DFLAG_HANDSHAKE_23        0x1000000ULL
#define DFLAG_UNLINK_ID           0x2000000ULL
#define DFLAG_V4_NC               (1ULL << 34)
#define PROBE_FLAGS                                                                             \
	(DFLAG_EXTENDED_REFERENCES | DFLAG_DIST_MONITOR | DFLAG_FUN_TAGS | DFLAG_NEW_FUN_TAGS | \
	 DFLAG_EXTENDED_PIDS_PORTS | DFLAG_EXPORT_PTR_TAG | DFLAG_BIT_BINARIES |                \
	 DFLAG_NEW_FLOATS | DFLAG_SMALL_ATOM_TAGS | DFLAG_UTF8_ATOMS | DFLAG_MAP_TAG |          \
	 DFLAG_BIG_CREATION | DFLAG_HANDSHAKE_23 | DFLAG_UNLINK_ID | DFLAG_V4_NC)

static int probe_wait(int fd, short events, int64_t deadline)
{
	for (;;) {
		unsigned left = dist_ms_left(deadline);
		if (left == 0)
			return GI_ETIMEOUT;
		struct pollfd p = {fd, events, 0};
		int n = poll(&p, 1, left > 60000 ? 60000 : (int)left);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return GI_EHANDSHAKE;
	}
}

/* Reads one 2-byte-length-prefixed handshake message into buf (at most
 * `size` bytes, *len set); GI_EHANDSHAKE when the peer closes first. */
static int probe_read_message(int fd, unsigned char *buf, size_t size, size_t *len,
                              int64_t deadline)
{
	unsigned char head[2];
	size_t got = 0, want = 2;
	unsigned char *dst = head;
	for (int part = 0; part < 2; part++) {
		while (got < want) {
			int rc = probe_wait(fd, POLLIN, deadline);
			if (rc)
				return rc;
			ssize_t n = recv(fd, dst + got, want - got, 0);
			if (n == 0)
				return GI_EHANDSHAKE;
			if (n < 0) {
				if (errno == EAGAIN || errno == EINTR)
					continue;
				return GI_EHANDSHAKE;
			}
			got += (size_t)n;
		}
		if (part == 0) {
			want = ((size_t)head[0] << 8) | head[1];
			if (want == 0 || want > size)
				return GI_EHANDSHAKE;
			dst = buf;
			got = 0;
		}
	}
	*len = want;
	return 0;
}

int dist_handshake_status_parse(const unsigned char *msg, size_t len)
{
	if (len < 1 || msg[0] != 's')
		return GI_EHANDSHAKE;
	if (GI_MEM_IS(msg + 1, len - 1, "not_allowed"))
		return GI_ENAMEREFUSED;
	if (len - 1 >= 2 && GI_MEM_IS(msg + 1, 2, "ok"))
		return 0;     /* "ok" or "ok_simultaneous" */
	return GI_EHANDSHAKE; /* nok, alive: another connection of ours won */
}

/* The stage at which a handshake with addr:port as `my_node` fails (see
 * above): GI_ECOOKIE, GI_ENAMEREFUSED, GI_EHANDSHAKE, GI_ENODEDOWN or
 * GI_ETIMEOUT. */
static int handshake_probe(const struct in_addr *addr, int port, const char *my_node,
                           unsigned creation, int64_t deadline)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return GI_EHANDSHAKE;
	int rc;
	struct sockaddr_in sa = {
	    .sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr = *addr};
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		rc = errno == EINPROGRESS ? probe_wait(fd, POLLOUT, deadline) : GI_ENODEDOWN;
		int err = 0;
		socklen_t elen = sizeof(err);
		if (rc == 0 && (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) != 0 || err))
			rc = err == ECONNREFUSED ? GI_ENODEDOWN : GI_EHANDSHAKE;
		if (rc)
			goto out;
	}
	size_t nlen = strlen(my_node);
	unsigned char msg[2 + 1 + 8 + 4 + 2 + DIST_NAME_MAX + 64];
	size_t body = 1 + 8 + 4 + 2 + nlen, i = 0;
	msg[i++] = (unsigned char)(body >> 8);
	msg[i++] = (unsigned char)body;
	msg[i++] = 'N';
	for (int b = 7; b >= 0; b--)
		msg[i++] = (unsigned char)(PROBE_FLAGS >> (8 * b));
	for (int b = 3; b >= 0; b--)
		msg[i++] = (unsigned char)(creation >> (8 * b));
	msg[i++] = (unsigned char)(nlen >> 8);
	msg[i++] = (unsigned char)nlen;
	memcpy(msg + i, my_node, nlen);
	i += nlen;
	for (size_t sent = 0; sent < i;) {
		rc = probe_wait(fd, POLLOUT, deadline);
		if (rc)
			goto out;
		ssize_t n = send(fd, msg + sent, i - sent, MSG_NOSIGNAL);
		if (n < 0 && errno != EAGAIN && errno != EINTR) {
			rc = GI_EHANDSHAKE;
			goto out;
		}
		if (n > 0)
			sent += (size_t)n;
	}
	unsigned char reply[1024];
	size_t len = 0;
	rc = probe_read_message(fd, reply, sizeof(reply), &len, deadline);
	if (rc)
		goto out;
	rc = dist_handshake_status_parse(reply, len);
	if (rc)
		goto out;
	rc = probe_read_message(fd, reply, sizeof(reply), &len, deadline);
	if (rc == 0)
		rc = reply[0] == 'N' || reply[0] == 'n' ? GI_ECOOKIE : GI_EHANDSHAKE;
out:
	close(fd);
	return rc;
}

static int host_resolve(const char *host, struct in_addr *addr)
{
	if (inet_pton(AF_INET, host, addr) == 1)
		return 0;
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res = NULL;
	if (getaddrinfo(host, NULL, &hints, &res) != 0 || !res)
		return GI_EEPMD;
	*addr = ((struct sockaddr_in *)res->ai_addr)->sin_addr;
	freeaddrinfo(res);
	return 0;
}

void dist_name_base_set(const char *base)
{
	size_t n = base ? strlen(base) : 0;
	if (n == 0 || n > 40 ||
	    strspn(base, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                 "0123456789_") != n)
		return;
	pthread_mutex_lock(&name_lock);
	gi_strlcpy(name_base, base, sizeof(name_base));
	pthread_mutex_unlock(&name_lock);
}

/* The directory of the name locks, made private to this user, in `out`;
 * false when there is none we can trust (then names are not reused). */
static bool names_dir(char *out, size_t size)
{
	const char *run = getenv("XDG_RUNTIME_DIR");
	if (run && run[0] == '/')
		snprintf(out, size, "%s/giulia-names", run);
	else
		snprintf(out, size, "/tmp/giulia-names-%lu", (unsigned long)getuid());
	if (mkdir(out, 0700) != 0 && errno != EEXIST)
		return false;
	struct stat st;
	return lstat(out, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == getuid() &&
	       (st.st_mode & 077) == 0;
}

/* Takes the lowest free name slot at or above `from` for node `target`:
 * returns the locked file's descriptor (closing it frees the slot) and the
 * slot in *slot, or -1. */
static int name_slot_take(const char *base, const char *target, int from, int *slot)
{
	char dir[512], path[1024];
	if (!names_dir(dir, sizeof(dir)))
		return -1;
	/* FNV-1a of the target's name: one set of slots per node */
	unsigned long long h = 1469598103934665603ULL;
	for (const char *p = target; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	for (int s = from; s < NAME_SLOTS; s++) {
		snprintf(path, sizeof(path), "%s/%s.%016llx.%d", dir, base, h, s);
		int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0)
			return -1;
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			/* dist_close wrote a byte when it released the slot */
			struct stat st;
			if (fstat(fd, &st) == 0 && st.st_size > 0) {
				int64_t since =
				    gi_clock_wall_ms() - ((int64_t)st.st_mtim.tv_sec * 1000 +
				                          st.st_mtim.tv_nsec / 1000000);
				if (since >= 0 && since < NAME_COOL_MS)
					gi_clock_sleep_ms((int)(NAME_COOL_MS - since));
			}
			*slot = s;
			return fd;
		}
		close(fd);
	}
	return -1;
}

/* Our own node name for a connection to `target` (name@host), in the
 * target's mode: long names when the target's host has a dot (an FQDN or
 * an IPv4 address), short names otherwise. The alive part is stable (see
 * dist_connect): *name_fd gets the slot's lock (or -1 when the name is a
 * one-off), trying slots from `from`; *slot the slot taken. */
static void own_name(const char *target, const char *target_host, int from, int *name_fd, int *slot,
                     char *alive, size_t alive_size, char *host, size_t host_size)
{
	pthread_mutex_lock(&name_lock);
	if (!name_base[0])
		snprintf(name_base, sizeof(name_base), "giulia_u%lu", (unsigned long)getuid());
	char base[48];
	gi_strlcpy(base, name_base, sizeof(base));
	unsigned long n = ++name_counter;
	pthread_mutex_unlock(&name_lock);
	*name_fd = name_slot_take(base, target, from, slot);
	if (*name_fd < 0)
		snprintf(alive, alive_size, "giulia_%ld_%lu", (long)getpid(), n);
	else if (*slot == 0)
		snprintf(alive, alive_size, "%s", base);
	else
		snprintf(alive, alive_size, "%s_%d", base, *slot);
	char self[256];
	if (gethostname(self, sizeof(self)) != 0)
		gi_strlcpy(self, "localhost", sizeof(self));
	self[sizeof(self) - 1] = '\0';
	if (strchr(target_host, '.')) {
		gi_strlcpy(host, strchr(self, '.') ? self : "127.0.0.1", host_size);
	} else {
		char *dot = strchr(self, '.');
		if (dot)
			*dot = '\0';
		gi_strlcpy(host, self, host_size);
	}
}

static int epmd_port(void)
{
	const char *env = getenv("ERL_EPMD_PORT");
	int64_t port = 0;
	if (env && gi_parse_int64(env, 1, 65535, &port) == 0)
		return (int)port;
	return 4369;
}

static int check_release(struct dist_conn *c, int64_t deadline)
{
	ei_x_buff args, reply;
	ei_x_new(&args);
	ei_x_new(&reply);
	ei_x_encode_list_header(&args, 1);
	ei_x_encode_atom(&args, "otp_release");
	ei_x_encode_empty_list(&args);
	int index = 0, rc = dist_rpc(c, "erlang", "system_info", &args, deadline, &reply, &index);
	if (rc == 0) {
		char buf[16];
		int type = 0, size = 0;
		if (ei_get_type(reply.buff, &index, &type, &size) == 0 && type == ERL_STRING_EXT &&
		    size > 0 && size < (int)sizeof(buf) &&
		    ei_decode_string(reply.buff, &index, buf) == 0) {
			gi_strlcpy(c->otp_release, buf, sizeof(c->otp_release));
			int64_t rel = 0;
			if (gi_parse_int64(buf, 0, 1000, &rel) != 0 || rel < 24)
				rc = GI_EOTPVERSION;
		} else {
			rc = GI_EBADRPC;
		}
	}
	ei_x_free(&args);
	ei_x_free(&reply);
	return rc;
}

int dist_connect(const struct dist_options *o, struct dist_conn **out)
{
	*out = NULL;
	pthread_once(&ei_once, ei_start);
	char alive[DIST_NAME_MAX], host[DIST_NAME_MAX];
	int rc = node_name_split(o->node, alive, sizeof(alive), host, sizeof(host));
	if (rc != 0)
		return rc;
	struct dist_conn *c = gi_calloc(1, sizeof(*c));
	c->fd = -1;
	c->name_fd = -1;
	c->timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : DIST_TIMEOUT_DEFAULT_MS;
	gi_strlcpy(c->node, o->node, sizeof(c->node));
	int64_t deadline = gi_clock_mono_ms() + c->timeout_ms;
	struct in_addr addr;
	rc = host_resolve(host, &addr);
	if (rc != 0)
		goto fail;
	/* epmd first: a node that is not there is the answer whatever the cookie. */
	struct epmd_port_reply ep;
	rc = epmd_port_please(&addr, epmd_port(), alive, deadline, &ep);
	if (rc != 0)
		goto fail;
	rc = cookie_resolve(o->cookie, c->cookie, sizeof(c->cookie));
	if (rc != 0)
		goto fail;
	if (ep.highest_version < 6) {
		rc = GI_EOTPVERSION;
		goto fail;
	}
	char my_alive[64], my_host[DIST_NAME_MAX], my_node[DIST_NAME_MAX + 64];
	int slot = -1;
	/* A node that has not yet seen our last connection under this name end
	 * (a cut it did not notice) answers the handshake "alive", which ei
	 * takes for a failure, and the probe that follows may find the name
	 * accepted by then (and blame the cookie): then the next slot's name is
	 * tried, once (a wrong cookie fails the same way again). */
	for (int attempt = 0;; attempt++) {
		own_name(o->node, host, slot + 1, &c->name_fd, &slot, my_alive, sizeof(my_alive),
		         my_host, sizeof(my_host));
		snprintf(my_node, sizeof(my_node), "%s@%s", my_alive, my_host);
		struct in_addr my_addr;
		inet_pton(AF_INET, "127.0.0.1", &my_addr);
		unsigned creation = (unsigned)(gi_clock_wall_ms() & 0x7fffffff) | 1u;
		if (ei_connect_xinit(&c->ec, my_host, my_alive, my_node, &my_addr, c->cookie,
		                     creation) < 0) {
			rc = GI_EINVAL;
			goto fail;
		}
		unsigned left = dist_ms_left(deadline);
		if (left == 0) {
			rc = GI_ETIMEOUT;
			goto fail;
		}
		c->fd = ei_xconnect_host_port_tmo(&c->ec, &addr, ep.port, left);
		if (c->fd >= 0)
			break;
		int err = erl_errno;
		c->fd = -1;
		if (err == ETIMEDOUT)
			rc = GI_ETIMEOUT;
		else if (err == ECONNREFUSED)
			rc = GI_ENODEDOWN;
		else /* ei cannot say at which stage: ask the node (see handshake_probe) */
			rc = handshake_probe(&addr, ep.port, my_node, creation, deadline);
		if ((rc != GI_EHANDSHAKE && rc != GI_ECOOKIE) || c->name_fd < 0 || attempt > 0)
			goto fail;
		close(c->name_fd);
		c->name_fd = -1;
	}
	rc = check_release(c, deadline);
	if (rc != 0)
		goto fail;
	gi_log_debug("observe", "connected to %s (OTP %s) as %s", c->node, c->otp_release, my_node);
	*out = c;
	return 0;
fail:
	dist_close(c);
	return rc;
}

void dist_close(struct dist_conn *c)
{
	if (!c)
		return;
	if (c->fd >= 0)
		ei_close_connection(c->fd);
	/* The name is free for the next connection once this one has closed;
	 * the byte written marks when (name_slot_take waits a little after). */
	if (c->name_fd >= 0) {
		if (pwrite(c->name_fd, "x", 1, 0) != 1) {
			/* a slot taken at once may meet "alive": the retry covers it */
		}
		close(c->name_fd);
	}
	volatile char *p = (volatile char *)c;
	for (size_t i = 0; i < sizeof(*c); i++)
		p[i] = 0;
	gi_free(c);
}

const char *dist_node(const struct dist_conn *c)
{
	return c->node;
}

const char *dist_otp_release(const struct dist_conn *c)
{
	return c->otp_release;
}

int dist_timeout_ms(const struct dist_conn *c)
{
	return c->timeout_ms;
}

static int receive_error(void)
{
	return erl_errno == ETIMEDOUT ? GI_ETIMEOUT : GI_ENODEDOWN;
}

int dist_send(struct dist_conn *c, const erlang_pid *to, const ei_x_buff *x, int64_t deadline_ms)
{
	unsigned left = dist_ms_left(deadline_ms);
	if (left == 0)
		return GI_ETIMEOUT;
	if (ei_send_tmo(c->fd, (erlang_pid *)to, x->buff, x->index, left) < 0)
		return receive_error();
	return 0;
}

int dist_receive(struct dist_conn *c, erlang_msg *msg, ei_x_buff *x, int64_t deadline_ms)
{
	for (;;) {
		unsigned left = dist_ms_left(deadline_ms);
		if (left == 0)
			return GI_ETIMEOUT;
		x->index = 0;
		int got = ei_xreceive_msg_tmo(c->fd, msg, x, left);
		if (got == ERL_TICK)
			continue;
		if (got == ERL_ERROR)
			return receive_error();
		if (msg->msgtype == ERL_SEND || msg->msgtype == ERL_REG_SEND)
			return 0;
		/* links, exits, monitors: nothing we asked for; skip */
	}
}

int dist_receive_one(struct dist_conn *c, erlang_msg *msg, ei_x_buff *x, unsigned tmo_ms, bool *got)
{
	*got = false;
	x->index = 0;
	int rc = ei_xreceive_msg_tmo(c->fd, msg, x, tmo_ms > 0 ? tmo_ms : 1);
	if (rc == ERL_TICK)
		return 0;
	if (rc == ERL_ERROR)
		return erl_errno == ETIMEDOUT ? GI_ETIMEOUT : GI_ENODEDOWN;
	*got = msg->msgtype == ERL_SEND || msg->msgtype == ERL_REG_SEND;
	return 0;
}

int dist_rpc_send(struct dist_conn *c, const char *mod, const char *fun, const ei_x_buff *args)
{
	if (ei_rpc_to(&c->ec, c->fd, (char *)mod, (char *)fun, args->buff, args->index) < 0)
		return receive_error();
	return 0;
}

bool dist_is_rex_reply(const ei_x_buff *x, int *index)
{
	int i = 0, version, arity;
	char atom[MAXATOMLEN_UTF8];
	if (ei_decode_version(x->buff, &i, &version) < 0 ||
	    ei_decode_tuple_header(x->buff, &i, &arity) < 0 || arity != 2 ||
	    ei_decode_atom(x->buff, &i, atom) < 0 || strcmp(atom, "rex") != 0)
		return false;
	*index = i;
	return true;
}

int dist_rpc(struct dist_conn *c, const char *mod, const char *fun, const ei_x_buff *args,
             int64_t deadline_ms, ei_x_buff *reply, int *index)
{
	int rc = dist_rpc_send(c, mod, fun, args);
	if (rc != 0)
		return rc;
	erlang_msg msg;
	for (;;) {
		unsigned left = dist_ms_left(deadline_ms);
		if (left == 0)
			return GI_ETIMEOUT;
		reply->index = 0;
		/* ei_rpc_from is ei_xreceive_msg_tmo with ERL_TIMEOUT for timeouts. */
		int got = ei_rpc_from(&c->ec, c->fd, (int)left, &msg, reply);
		if (got == ERL_TICK)
			continue;
		if (got == ERL_TIMEOUT)
			return GI_ETIMEOUT;
		if (got == ERL_ERROR)
			return receive_error();
		if (msg.msgtype != ERL_SEND && msg.msgtype != ERL_REG_SEND)
			continue;
		if (!dist_is_rex_reply(reply, index))
			continue; /* a stray message: not ours to answer */
		int i = *index, arity;
		char atom[MAXATOMLEN_UTF8];
		if (ei_decode_tuple_header(reply->buff, &i, &arity) == 0 && arity == 2 &&
		    ei_decode_atom(reply->buff, &i, atom) == 0 && strcmp(atom, "badrpc") == 0) {
			if (gi_log_enabled(GI_LOG_DEBUG)) {
				char *text = NULL;
				int j = i;
				ei_s_print_term(&text, reply->buff, &j);
				gi_log_debug("observe", "badrpc from %s: %.500s", c->node,
				             text ? text : "?");
				free(text);
			}
			return GI_EBADRPC;
		}
		return 0;
	}
}

/* Abstract-format helpers for the bootstrap expression (line 1 everywhere). */
static void form_atom(ei_x_buff *x, const char *name)
{
	ei_x_encode_tuple_header(x, 3);
	ei_x_encode_atom(x, "atom");
	ei_x_encode_long(x, 1);
	ei_x_encode_atom(x, name);
}

static void form_var(ei_x_buff *x, const char *name)
{
	ei_x_encode_tuple_header(x, 3);
	ei_x_encode_atom(x, "var");
	ei_x_encode_long(x, 1);
	ei_x_encode_atom(x, name);
}

/* {call,1,{remote,1,{atom,1,M},{atom,1,F}},[...]}: the caller encodes the
 * `nargs` arguments and then the list's tail. */
static void form_remote_call(ei_x_buff *x, const char *mod, const char *fun, int nargs)
{
	ei_x_encode_tuple_header(x, 4);
	ei_x_encode_atom(x, "call");
	ei_x_encode_long(x, 1);
	ei_x_encode_tuple_header(x, 4);
	ei_x_encode_atom(x, "remote");
	ei_x_encode_long(x, 1);
	form_atom(x, mod);
	form_atom(x, fun);
	ei_x_encode_list_header(x, nargs);
}

/* {match,1,{tuple,1,[{atom,1,Tag},{var,1,V1},{var,1,'_'}...]}, <expr follows>} */
static void form_match_tuple(ei_x_buff *x, const char *tag, const char *const *vars, int nvars)
{
	ei_x_encode_tuple_header(x, 4);
	ei_x_encode_atom(x, "match");
	ei_x_encode_long(x, 1);
	ei_x_encode_tuple_header(x, 3);
	ei_x_encode_atom(x, "tuple");
	ei_x_encode_long(x, 1);
	ei_x_encode_list_header(x, nvars + 1);
	form_atom(x, tag);
	for (int i = 0; i < nvars; i++)
		form_var(x, vars[i]);
	ei_x_encode_empty_list(x);
}

void dist_eval_args_encode(ei_x_buff *out, const char *src, size_t src_len,
                           const ei_x_buff *args_term)
{
	ei_x_new(out);
	/* [Boot, Bindings, none, none, value] */
	ei_x_encode_list_header(out, 5);
	/* Boot = {block,1,[
	 *   {ok,T,_} = erl_scan:string(binary_to_list(Src)),
	 *   {ok,E} = erl_parse:parse_exprs(T),
	 *   {value,V,_} = erl_eval:exprs(E, [{'Args',Args}]),
	 *   V]} */
	ei_x_encode_tuple_header(out, 3);
	ei_x_encode_atom(out, "block");
	ei_x_encode_long(out, 1);
	ei_x_encode_list_header(out, 4);
	static const char *const scan_vars[] = {"T", "_"};
	form_match_tuple(out, "ok", scan_vars, 2);
	form_remote_call(out, "erl_scan", "string", 1);
	/* Src travels as a binary: off the heap of the target's rex, which
	 * receives the call (a 70 KB source as a list of characters was 1.1 MB
	 * of rex's heap per call, kept until rex next collects) */
	form_remote_call(out, "erlang", "binary_to_list", 1);
	form_var(out, "Src");
	ei_x_encode_empty_list(out);
	ei_x_encode_empty_list(out);
	static const char *const parse_vars[] = {"E"};
	form_match_tuple(out, "ok", parse_vars, 1);
	form_remote_call(out, "erl_parse", "parse_exprs", 1);
	form_var(out, "T");
	ei_x_encode_empty_list(out);
	static const char *const eval_vars[] = {"V", "_"};
	form_match_tuple(out, "value", eval_vars, 2);
	form_remote_call(out, "erl_eval", "exprs", 2);
	form_var(out, "E");
	/* [{'Args', Args}] as a cons form:
	 * {cons,1,{tuple,1,[{atom,1,'Args'},{var,1,'Args'}]},{nil,1}} */
	ei_x_encode_tuple_header(out, 4);
	ei_x_encode_atom(out, "cons");
	ei_x_encode_long(out, 1);
	ei_x_encode_tuple_header(out, 3);
	ei_x_encode_atom(out, "tuple");
	ei_x_encode_long(out, 1);
	ei_x_encode_list_header(out, 2);
	form_atom(out, "Args");
	form_var(out, "Args");
	ei_x_encode_empty_list(out);
	ei_x_encode_tuple_header(out, 2);
	ei_x_encode_atom(out, "nil");
	ei_x_encode_long(out, 1);
	ei_x_encode_empty_list(out); /* end of exprs/2's argument list */
	form_var(out, "V");
	ei_x_encode_empty_list(out); /* end of the block */
	/* Bindings = [{'Src', "..."}, {'Args', Args}] */
	ei_x_encode_list_header(out, 2);
	ei_x_encode_tuple_header(out, 2);
	ei_x_encode_atom(out, "Src");
	ei_x_encode_binary(out, src, (long)src_len);
	ei_x_encode_tuple_header(out, 2);
	ei_x_encode_atom(out, "Args");
	ei_x_append_buf(out, args_term->buff, args_term->index);
	ei_x_encode_empty_list(out);
	ei_x_encode_atom(out, "none");
	ei_x_encode_atom(out, "none");
	ei_x_encode_atom(out, "value");
	ei_x_encode_empty_list(out);
}

int dist_eval(struct dist_conn *c, const char *src, size_t src_len, const ei_x_buff *args_term,
              int64_t deadline_ms, ei_x_buff *reply, int *index)
{
	ei_x_buff args;
	dist_eval_args_encode(&args, src, src_len, args_term);
	int rc = dist_rpc(c, "erl_eval", "expr", &args, deadline_ms, reply, index);
	ei_x_free(&args);
	return rc;
}

int dist_object_code_fetch(struct dist_conn *c, const char *atom_text, unsigned char **code_out,
                           size_t *len_out, char **filename_out)
{
	*code_out = NULL;
	*len_out = 0;
	*filename_out = NULL;
	ei_x_buff term, reply;
	ei_x_new(&term);
	ei_x_new(&reply);
	ei_x_encode_binary(&term, atom_text, (long)strlen(atom_text));
	int index = 0;
	int rc = dist_eval(c, probe_object_code, probe_object_code_len, &term,
	                   gi_clock_mono_ms() + c->timeout_ms, &reply, &index);
	if (rc != 0)
		goto out;
	int arity, type, size;
	char tag[MAXATOMLEN_UTF8];
	if (ei_decode_tuple_header(reply.buff, &index, &arity) < 0 || arity != 3 ||
	    ei_decode_atom(reply.buff, &index, tag) < 0 || strcmp(tag, "ok") != 0) {
		rc = GI_ENOTFOUND;
		goto out;
	}
	if (ei_get_type(reply.buff, &index, &type, &size) < 0 || type != ERL_BINARY_EXT ||
	    size < 0 || size > DIST_MAX_REPLY) {
		rc = GI_EBADRPC;
		goto out;
	}
	unsigned char *code = gi_malloc((size_t)size + 1);
	long got = 0;
	if (ei_decode_binary(reply.buff, &index, code, &got) < 0) {
		gi_free(code);
		rc = GI_EBADRPC;
		goto out;
	}
	if (ei_get_type(reply.buff, &index, &type, &size) < 0 || type != ERL_BINARY_EXT ||
	    size < 0 || size > 65536) {
		gi_free(code);
		rc = GI_EBADRPC;
		goto out;
	}
	char *file = gi_malloc((size_t)size + 1);
	long flen = 0;
	ei_decode_binary(reply.buff, &index, file, &flen);
	file[flen] = '\0';
	*code_out = code;
	*len_out = (size_t)got;
	*filename_out = file;
out:
	ei_x_free(&term);
	ei_x_free(&reply);
	return rc;
}

/* Runs probe `src` with `term` and decodes its ["ok", [binaries]] answer. */
static int eval_names(struct dist_conn *c, const char *src, size_t src_len, ei_x_buff *term,
                      char ***modules_out, size_t *count_out)
{
	*modules_out = NULL;
	*count_out = 0;
	ei_x_buff reply;
	ei_x_new(&reply);
	int index = 0;
	int rc =
	    dist_eval(c, src, src_len, term, gi_clock_mono_ms() + c->timeout_ms, &reply, &index);
	if (rc != 0)
		goto out;
	json_t *value = NULL;
	if (obs_term_to_json(reply.buff, reply.index, &index, &value) != 0) {
		rc = GI_EBADRPC;
		goto out;
	}
	/* ["ok", [names]] or ["error", reason] */
	json_t *list = json_array_get(value, 1);
	if (!json_is_array(value) || json_array_size(value) != 2 ||
	    strcmp(json_string_value(json_array_get(value, 0))
	               ? json_string_value(json_array_get(value, 0))
	               : "",
	           "ok") != 0 ||
	    !json_is_array(list)) {
		json_decref(value);
		rc = GI_ENOTFOUND;
		goto out;
	}
	size_t n = json_array_size(list), k = 0;
	char **names = gi_calloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++) {
		const char *s = json_string_value(json_array_get(list, i));
		if (s)
			names[k++] = gi_strdup(s);
	}
	json_decref(value);
	*modules_out = names;
	*count_out = k;
out:
	ei_x_free(&reply);
	return rc;
}

int dist_app_modules(struct dist_conn *c, const char *app, char ***modules_out, size_t *count_out)
{
	ei_x_buff term;
	ei_x_new(&term);
	ei_x_encode_binary(&term, app, (long)strlen(app));
	int rc =
	    eval_names(c, probe_app_modules, probe_app_modules_len, &term, modules_out, count_out);
	ei_x_free(&term);
	return rc;
}

int dist_modules_apps(struct dist_conn *c, const char *const *modules, size_t count,
                      char ***apps_out, size_t *count_out)
{
	ei_x_buff term;
	ei_x_new(&term);
	if (count > 0)
		ei_x_encode_list_header(&term, (long)count);
	for (size_t i = 0; i < count; i++)
		ei_x_encode_binary(&term, modules[i], (long)strlen(modules[i]));
	ei_x_encode_empty_list(&term);
	int rc =
	    eval_names(c, probe_modules_apps, probe_modules_apps_len, &term, apps_out, count_out);
	ei_x_free(&term);
	return rc;
}

int dist_storage_facts(struct dist_conn *c, char ***lines_out, size_t *count_out)
{
	ei_x_buff term;
	ei_x_new(&term);
	ei_x_encode_atom(&term, "none");
	int rc = eval_names(c, probe_storage, probe_storage_len, &term, lines_out, count_out);
	ei_x_free(&term);
	return rc;
}

void dist_strings_free(char **strings, size_t count)
{
	if (!strings)
		return;
	for (size_t i = 0; i < count; i++)
		gi_free(strings[i]);
	gi_free(strings);
}

const char *dist_error_hint(int code)
{
	/* an invalid argument, here, is the node's name */
	return code == GI_EINVAL ? "node names look like name@host" : gi_error_hint(code);
}
