/*
 * pusher_util.c - driving the pusher from a test (see pusher_util.h).
 */
#include "pusher_util.h"

#include <dirent.h>

#include "harness.h"

static void pusher_free_deferred(void *arg)
{
	api_pusher_free(arg, 0);
}

struct api_pusher *ts_pusher_new_deferred(const struct api_pusher_config *cfg)
{
	struct api_pusher *p = NULL;
	TH_ASSERT_OK(api_pusher_new(cfg, &p));
	th_defer(pusher_free_deferred, p);
	return p;
}

long long ts_pusher_stat(struct api_pusher *p, const char *key)
{
	json_t *s = api_pusher_stats(p);
	long long v = json_integer_value(json_object_get(s, key));
	json_decref(s);
	return v;
}

int ts_count_files(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	if (d)
		closedir(d);
	return n;
}
