/*
 * dist_errors.c - every way a connection to a node can fail gets its own
 * error, exit code and hint, on real nodes and real epmd: no cookie found,
 * not registered, cookie rejected at the challenge, name refused
 * (not_allowed), a peer that closes during the handshake, a peer that never
 * answers; through `giulia pulse`, through the monitor's HTTP answers and
 * through `giulia-observe`. The two fake peers are sockets of this test
 * registered with the machine's epmd under a unique name; nothing leaves
 * 127.0.0.1.
 * needs: erlang-base
 */
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "api_util.h"
#include "base/error.h"
#include "base/str.h"
#include "cli/cli.h"
#include "giulia_cli.h"
#include "observe/dist.h"

/* HOME without ~/.erlang.cookie and no GIULIA_COOKIE: nothing to find. */
static void no_cookie_anywhere(void)
{
	char home[600];
	snprintf(home, sizeof(home), "%s/home", th_tmpdir());
	mkdir(home, 0700);
	setenv("HOME", home, 1);
	unsetenv("GIULIA_COOKIE");
}

static int pulse(const char *node, const char *cookie, const char *timeout_ms, char **err_out)
{
	const char *args[10];
	int n = 0;
	args[n++] = "pulse";
	args[n++] = node;
	args[n++] = "--window";
	args[n++] = "50";
	if (cookie) {
		args[n++] = "--cookie";
		args[n++] = cookie;
	}
	if (timeout_ms) {
		args[n++] = "--timeout";
		args[n++] = timeout_ms;
	}
	args[n] = NULL;
	struct ts_giulia_result r = ts_giulia_run(args, 60000);
	int status = r.status;
	if (err_out)
		*err_out = r.err ? strdup(r.err) : strdup("");
	ts_giulia_result_free(&r);
	return status;
}

#define EXPECT_PULSE(node, cookie, timeout, want_exit, want_text)                               \
	do {                                                                                    \
		char *err_ = NULL;                                                              \
		int st_ = pulse(node, cookie, timeout, &err_);                                  \
		TH_ASSERT_MSG(st_ == (want_exit), "pulse %s: exit %d (want %d): %s", node, st_, \
		              (int)(want_exit), err_);                                          \
		TH_ASSERT_STR_CONTAINS(err_, want_text);                                        \
		free(err_);                                                                     \
	} while (0)

/* ---- fake peers: a listening socket registered with epmd ---- */

struct fake_peer {
	char alive[32];
	int listen_fd, epmd_fd;
	bool answer_nothing; /* true: accept and hold; false: accept and close at once */
	pthread_t thread;
	int held[16];
	int nheld;
};

static void *fake_peer_main(void *arg)
{
	struct fake_peer *f = arg;
	for (;;) {
		int fd = accept(f->listen_fd, NULL, NULL);
		if (fd < 0)
			return NULL;
		if (f->answer_nothing && f->nheld < 16)
			f->held[f->nheld++] = fd; /* read nothing, answer nothing */
		else
			close(fd);
	}
}

static void fake_peer_stop(void *arg)
{
	struct fake_peer *f = arg;
	shutdown(f->listen_fd, SHUT_RDWR);
	close(f->listen_fd);
	pthread_join(f->thread, NULL);
	for (int i = 0; i < f->nheld; i++)
		close(f->held[i]);
	close(f->epmd_fd);
}

/* Registers f->alive with epmd (ALIVE2_REQ) for a new listening port. */
static void fake_peer_start(struct fake_peer *f, bool answer_nothing)
{
	f->answer_nothing = answer_nothing;
	ts_random_string(f->alive, 10);
	f->alive[0] = 'f';
	f->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	TH_ASSERT(bind(f->listen_fd, (struct sockaddr *)&a, sizeof(a)) == 0);
	TH_ASSERT(listen(f->listen_fd, 16) == 0);
	socklen_t alen = sizeof(a);
	TH_ASSERT(getsockname(f->listen_fd, (struct sockaddr *)&a, &alen) == 0);
	int port = ntohs(a.sin_port);

	const char *env = getenv("ERL_EPMD_PORT");
	int64_t epmd = 4369;
	if (env && gi_parse_int64(env, 1, 65535, &epmd) != 0)
		epmd = 4369;
	f->epmd_fd = td_connect((int)epmd);
	TH_ASSERT_MSG(f->epmd_fd >= 0, "no epmd on this machine");
	size_t nlen = strlen(f->alive);
	unsigned char req[64];
	size_t i = 2;
	req[i++] = 120; /* ALIVE2_REQ */
	req[i++] = (unsigned char)(port >> 8);
	req[i++] = (unsigned char)port;
	req[i++] = 77; /* normal node */
	req[i++] = 0;  /* TCP/IPv4 */
	req[i++] = 0;
	req[i++] = 6; /* highest version */
	req[i++] = 0;
	req[i++] = 5; /* lowest version */
	req[i++] = 0;
	req[i++] = (unsigned char)nlen;
	memcpy(req + i, f->alive, nlen);
	i += nlen;
	req[i++] = 0;
	req[i++] = 0; /* no extra */
	req[0] = (unsigned char)((i - 2) >> 8);
	req[1] = (unsigned char)(i - 2);
	TH_ASSERT(td_send_all(f->epmd_fd, (const char *)req, i));
	unsigned char resp[8];
	ssize_t got = recv(f->epmd_fd, resp, sizeof(resp), 0);
	TH_ASSERT_MSG(got >= 2 && (resp[0] == 121 || resp[0] == 118) && resp[1] == 0,
	              "epmd refused to register %s", f->alive);
	TH_ASSERT(pthread_create(&f->thread, NULL, fake_peer_main, f) == 0);
	th_defer(fake_peer_stop, f);
}

static void pulse_tells_every_failure_apart(void)
{
	struct ts_beam n;
	ts_beam_start(&n, TS_BEAM_ERL_LONG, NULL, NULL);
	no_cookie_anywhere();
	/* Before: "cookie rejected by the node" (12) for all of the first three. */
	EXPECT_PULSE(n.name, NULL, NULL, CLI_EXIT_NOCOOKIE, "GIULIA_COOKIE");
	EXPECT_PULSE(n.name, NULL, NULL, CLI_EXIT_NOCOOKIE, "~/.erlang.cookie");
	EXPECT_PULSE("nosuch@127.0.0.1", NULL, NULL, CLI_EXIT_NONODE, "not registered");
	EXPECT_PULSE(n.name, "wrong-cookie", NULL, CLI_EXIT_COOKIE, "cookie");
	EXPECT_PULSE(n.name, n.cookie, NULL, CLI_EXIT_OK, "");
	/* An empty cookie file is no cookie either. */
	char path[700];
	snprintf(path, sizeof(path), "%s/.erlang.cookie", getenv("HOME"));
	FILE *fp = fopen(path, "w");
	TH_ASSERT(fp != NULL);
	fclose(fp);
	EXPECT_PULSE(n.name, NULL, NULL, CLI_EXIT_NOCOOKIE, "empty");
	unlink(path);

	/* A peer that closes the connection right away: not a cookie problem. */
	static struct fake_peer closer; /* static: its thread and stop outlive this frame */
	fake_peer_start(&closer, false);
	char fake_name[64];
	snprintf(fake_name, sizeof(fake_name), "%s@127.0.0.1", closer.alive);
	EXPECT_PULSE(fake_name, "any", NULL, CLI_EXIT_HANDSHAKE, "closed the connection");
	/* A peer that never answers: a timeout. */
	static struct fake_peer silent;
	fake_peer_start(&silent, true);
	snprintf(fake_name, sizeof(fake_name), "%s@127.0.0.1", silent.alive);
	EXPECT_PULSE(fake_name, "any", "700", CLI_EXIT_TIMEOUT, "timed out");

	/* A node whose allow list leaves us out answers not_allowed. */
	char *r = ts_beam_eval(&n, "net_kernel:allow([nobody@nohost]).");
	TH_ASSERT_MSG(r && strstr(r, "ok"), "allow failed: %s", r ? r : "(null)");
	free(r);
	EXPECT_PULSE(n.name, n.cookie, NULL, CLI_EXIT_NAMEREFUSED, "not_allowed");
	EXPECT_PULSE(n.name, "wrong-cookie", NULL, CLI_EXIT_NAMEREFUSED, "refused our node name");
}

static void library_codes_match(void)
{
	struct ts_beam n;
	ts_beam_start(&n, TS_BEAM_ERL_SHORT, NULL, NULL);
	no_cookie_anywhere();
	struct dist_conn *c = NULL;
	struct dist_options o = {n.name, NULL, 5000};
	TH_ASSERT_INT_EQ(dist_connect(&o, &c), GI_ENOCOOKIE);
	o.cookie = "wrong";
	TH_ASSERT_INT_EQ(dist_connect(&o, &c), GI_ECOOKIE);
	o.cookie = n.cookie;
	TH_ASSERT_OK(dist_connect(&o, &c));
	dist_close(c);
	TH_ASSERT(strlen(dist_error_hint(GI_ENAMEREFUSED)) > 0);
	TH_ASSERT(strlen(dist_error_hint(GI_EHANDSHAKE)) > 0);
	TH_ASSERT(strlen(dist_error_hint(GI_ENOCOOKIE)) > 0);
}

static void monitor_answers_carry_the_true_cause(void)
{
	struct ts_beam n;
	ts_beam_start(&n, TS_BEAM_ERL_LONG, NULL, NULL);
	no_cookie_anywhere(); /* inherited by the monitor */
	struct td_daemon w, m;
	td_worker_and_monitor(&w, &m);

	struct {
		const char *body_node, *cookie;
		int status;
		const char *code;
	} cases[] = {
	    {n.name, NULL, 400, "NOCOOKIE"},
	    {"nosuch@127.0.0.1", NULL, 404, "NONODE"},
	    {n.name, "wrong-cookie", 502, "COOKIE"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *b =
		    json_pack("{s:s, s:s?}", "node", cases[i].body_node, "cookie", cases[i].cookie);
		char *text = json_dumps(b, JSON_COMPACT);
		json_decref(b);
		json_t *r = NULL;
		int st = td_post(&m, "/api/runtime/connect", text, &r);
		free(text);
		TH_ASSERT_MSG(st == cases[i].status, "connect %s: %d (want %d)", cases[i].body_node,
		              st, cases[i].status);
		TH_ASSERT_STR_EQ(json_string_value(json_object_get(r, "code")), cases[i].code);
		TH_ASSERT(json_is_string(json_object_get(r, "hint")));
		json_decref(r);
	}

	/* giulia-observe gives the exit code and hint that giulia pulse gives. */
	setenv("GIULIA_MONITOR_URL", m.url, 1);
	char bin[1024];
	snprintf(bin, sizeof(bin), "%s/giulia-observe", th_bindir());
	const char *argv[] = {bin, "start", n.name, NULL};
	char *out = NULL, *err = NULL;
	int st = ts_run(argv, NULL, 60000, &out, &err);
	TH_ASSERT_MSG(st == CLI_EXIT_NOCOOKIE, "giulia-observe start: exit %d: %s", st,
	              err ? err : "");
	TH_ASSERT_STR_CONTAINS(err, "GIULIA_COOKIE");
	free(out);
	free(err);
	const char *argv2[] = {bin, "start", "nosuch@127.0.0.1", "abc", NULL};
	st = ts_run(argv2, NULL, 60000, &out, &err);
	TH_ASSERT_MSG(st == CLI_EXIT_NONODE, "giulia-observe start nosuch: exit %d: %s", st,
	              err ? err : "");
	free(out);
	free(err);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(pulse_tells_every_failure_apart),
	    TH_TEST(library_codes_match),
	    TH_TEST(monitor_answers_carry_the_true_cause),
	    TH_END,
	};
	return th_main(argc, argv, "integration_dist_errors", tests);
}
