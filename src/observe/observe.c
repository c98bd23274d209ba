/*
 * observe.c - placeholder until the runtime observer lands (see observe.h).
 */
#include "observe/observe.h"

#include "base/error.h"

int obs_pulse(const struct obs_target *t, int window_ms, int top_n, json_t **snapshot_out)
{
	(void)t;
	(void)window_ms;
	(void)top_n;
	*snapshot_out = NULL;
	return GI_EUNSUPPORTED;
}

int obs_trace(const struct obs_target *t, const char *const *modules, int window_ms, json_t **out)
{
	(void)t;
	(void)modules;
	(void)window_ms;
	*out = NULL;
	return GI_EUNSUPPORTED;
}

int obs_manager_new(const struct obs_callbacks *cb, struct obs_manager **out)
{
	(void)cb;
	*out = NULL;
	return GI_EUNSUPPORTED;
}

void obs_manager_free(struct obs_manager *m)
{
	(void)m;
}

int obs_session_start(struct obs_manager *m, const struct obs_session_config *cfg,
                      char **session_id_out)
{
	(void)m;
	(void)cfg;
	*session_id_out = NULL;
	return GI_EUNSUPPORTED;
}

int obs_session_stop(struct obs_manager *m, const char *node)
{
	(void)m;
	(void)node;
	return GI_EUNSUPPORTED;
}

json_t *obs_manager_status(struct obs_manager *m)
{
	(void)m;
	return json_array();
}

json_t *obs_manager_history(struct obs_manager *m, const char *node, int limit)
{
	(void)m;
	(void)node;
	(void)limit;
	return NULL;
}
