/*
 * Unit tests of the dashboard's pass-through head parser
 * (src/api/dash.c: api_dash_parse_head): answers as the monitor gives them,
 * heads that are not complete yet, and heads that are not HTTP.
 * needs:
 */
#include <stdio.h>
#include <string.h>

#include "api/dash.h"
#include "base/error.h"
#include "harness.h"

static int parse(const char *text, int *status, char *type, size_t *head)
{
	return api_dash_parse_head(text, strlen(text), status, type, 64, head);
}

static void answers_as_the_monitor_gives_them(void)
{
	int status;
	char type[64];
	size_t head;
	const char *sse = "HTTP/1.1 200 OK\r\nDate: x\r\nContent-Type: text/event-stream\r\n"
	                  "Cache-Control: no-store\r\n\r\nretry: 2000\n\n";
	TH_ASSERT_OK(parse(sse, &status, type, &head));
	TH_ASSERT_INT_EQ(status, 200);
	TH_ASSERT_STR_EQ(type, "text/event-stream");
	TH_ASSERT_STR_EQ(sse + head, "retry: 2000\n\n");
	TH_ASSERT_OK(parse("HTTP/1.0 404 Not Found\r\ncontent-type:  application/json\r\n\r\n{}",
	                   &status, type, &head));
	TH_ASSERT_INT_EQ(status, 404);
	TH_ASSERT_STR_EQ(type, "application/json");
	TH_ASSERT_OK(parse("HTTP/1.1 204\r\n\r\n", &status, type, &head));
	TH_ASSERT_INT_EQ(status, 204);
	TH_ASSERT_STR_EQ(type, "");
}

static void incomplete_heads_ask_for_more(void)
{
	int status;
	char type[64];
	size_t head = 99;
	TH_ASSERT_OK(parse("HTTP/1.1 200 OK\r\nContent-Type: te", &status, type, &head));
	TH_ASSERT_INT_EQ(head, 0);
	TH_ASSERT_OK(parse("", &status, type, &head));
	TH_ASSERT_INT_EQ(head, 0);
}

static void heads_that_are_not_http_are_refused(void)
{
	int status;
	char type[64];
	size_t head;
	const char *bad[] = {"SSH-2.0-OpenSSH\r\n\r\n",
	                     "HTTP/1.1 20 OK\r\n\r\n",
	                     "HTTP/1.1 999 No\r\n\r\n",
	                     "HTTP/1.1 2x0 OK\r\n\r\n",
	                     "HTTP/1.1 200OK\r\n\r\n",
	                     "\r\n\r\n",
	                     NULL};
	for (int i = 0; bad[i]; i++)
		TH_ASSERT_MSG(parse(bad[i], &status, type, &head) == GI_EPARSE, "accepted %s",
		              bad[i]);
	/* A head that never ends is refused once past the cap. */
	static char big[API_DASH_HEAD_MAX + 64];
	memset(big, 'a', sizeof(big) - 1);
	memcpy(big, "HTTP/1.1 200 OK\r\nX: ", 20);
	TH_ASSERT_INT_EQ(parse(big, &status, type, &head), GI_EPARSE);
	/* A long content type is cut, still terminated. */
	char x300[301], longtype[512];
	memset(x300, 'x', 300);
	x300[300] = '\0';
	snprintf(longtype, sizeof(longtype), "HTTP/1.1 200 OK\r\nContent-Type: %s\r\n\r\n", x300);
	TH_ASSERT_OK(parse(longtype, &status, type, &head));
	TH_ASSERT_INT_EQ(strlen(type), 63);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(answers_as_the_monitor_gives_them),
	    TH_TEST(incomplete_heads_ask_for_more),
	    TH_TEST(heads_that_are_not_http_are_refused),
	    TH_END,
	};
	return th_main(argc, argv, "unit_api_dash", tests);
}
