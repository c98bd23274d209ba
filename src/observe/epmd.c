/*
 * epmd.c - PORT_PLEASE2 against epmd with a deadline (see epmd.h).
 *
 * Request: u16 length, 'z' (122), the alive name. Reply: 'w' (119), a result
 * byte (0: found), then u16 port, u8 node type, u8 protocol, u16 highest and
 * u16 lowest protocol version, u16 name length, name, u16 extra length,
 * extra. epmd closes the connection after replying.
 */
#include "observe/epmd.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/error.h"

#define EPMD_PORT2_REQ  122
#define EPMD_PORT2_RESP 119
#define EPMD_REPLY_MAX  1024

static unsigned get16(const unsigned char *p)
{
	return ((unsigned)p[0] << 8) | p[1];
}

int epmd_port_reply_parse(const unsigned char *data, size_t len, struct epmd_port_reply *out)
{
	memset(out, 0, sizeof(*out));
	if (len < 2 || data[0] != EPMD_PORT2_RESP)
		return GI_EPARSE;
	if (data[1] != 0)
		return GI_ENONODE;
	if (len < 12)
		return GI_EPARSE;
	out->port = (int)get16(data + 2);
	out->node_type = data[4];
	out->protocol = data[5];
	out->highest_version = (int)get16(data + 6);
	out->lowest_version = (int)get16(data + 8);
	size_t nlen = get16(data + 10);
	if (12 + nlen > len || out->port == 0)
		return GI_EPARSE;
	return 0;
}

static int wait_fd(int fd, short events, int64_t deadline_ms)
{
	for (;;) {
		int64_t left = deadline_ms - gi_clock_mono_ms();
		if (left <= 0)
			return GI_ETIMEOUT;
		struct pollfd p = {fd, events, 0};
		int n = poll(&p, 1, (int)(left > 60000 ? 60000 : left));
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return GI_EIO;
	}
}

int epmd_port_please(const struct in_addr *addr, int epmd_port, const char *alive,
                     int64_t deadline_ms, struct epmd_port_reply *out)
{
	size_t alen = strlen(alive);
	if (alen == 0 || alen > 255)
		return GI_EINVAL;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return GI_EEPMD;
	int rc = GI_EEPMD;
	struct sockaddr_in sa = {
	    .sin_family = AF_INET, .sin_port = htons((uint16_t)epmd_port), .sin_addr = *addr};
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		if (errno != EINPROGRESS)
			goto out;
		if (wait_fd(fd, POLLOUT, deadline_ms) != 0)
			goto out;
		int err = 0;
		socklen_t elen = sizeof(err);
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) != 0 || err != 0)
			goto out;
	}
	unsigned char req[3 + 255];
	req[0] = (unsigned char)((alen + 1) >> 8);
	req[1] = (unsigned char)((alen + 1) & 0xff);
	req[2] = EPMD_PORT2_REQ;
	memcpy(req + 3, alive, alen);
	size_t sent = 0, total = alen + 3;
	while (sent < total) {
		if (wait_fd(fd, POLLOUT, deadline_ms) != 0)
			goto out;
		ssize_t n = send(fd, req + sent, total - sent, MSG_NOSIGNAL);
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			goto out;
		if (n > 0)
			sent += (size_t)n;
	}
	unsigned char reply[EPMD_REPLY_MAX];
	size_t got = 0;
	while (got < sizeof(reply)) {
		if (wait_fd(fd, POLLIN, deadline_ms) != 0)
			goto out;
		ssize_t n = recv(fd, reply + got, sizeof(reply) - got, 0);
		if (n == 0)
			break;
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			goto out;
		}
		got += (size_t)n;
		if (got >= 2 && reply[1] != 0)
			break; /* not found: nothing more follows */
	}
	rc = epmd_port_reply_parse(reply, got, out);
out:
	close(fd);
	return rc;
}
