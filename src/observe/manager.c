/* placeholder, replaced below */
#include "observe/observe.h"
#include "base/error.h"
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
int obs_session_start(struct obs_manager *m, const struct obs_session_config *cfg, char **id)
{
	(void)m;
	(void)cfg;
	*id = NULL;
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
