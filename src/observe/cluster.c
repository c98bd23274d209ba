/*
 * cluster.c - the members of a node's cluster (obs_cluster_members, see
 * observe.h): one deadline-bounded rpc of erlang:nodes/0 on the seed node.
 *
 * Only visible nodes are members: hidden nodes (other observers, erl_call,
 * remote shells started with -hidden) are not part of the application's
 * cluster and are never observed by this route. Nothing is created on the
 * target: nodes/0 reads the connection table.
 */
#include "observe/observe.h"

#include <string.h>

#include "base/alloc.h"
#include "base/clock.h"
#include "base/error.h"
#include "observe/observe_int.h"
#include "observe/term.h"

int obs_cluster_members(const struct obs_target *t, size_t max, char ***members_out,
                        size_t *count_out, size_t *total_out)
{
	*members_out = NULL;
	*count_out = 0;
	*total_out = 0;
	struct dist_conn *c = NULL;
	ei_x_buff args, reply;
	int rc = obs_oneshot_prepare(t, NULL, NULL, &c, &args, &reply);
	if (rc != 0)
		return rc;
	ei_x_encode_empty_list(&args);
	int index = 0;
	json_t *list = NULL;
	rc = dist_rpc(c, "erlang", "nodes", &args, gi_clock_mono_ms() + dist_timeout_ms(c), &reply,
	              &index);
	if (rc == 0 &&
	    (obs_term_to_json(reply.buff, reply.index, &index, &list) != 0 || !json_is_array(list)))
		rc = GI_EBADRPC;
	if (rc == 0) {
		size_t n = json_array_size(list), k = 0;
		char **names = gi_calloc(n < max ? n + 1 : max + 1, sizeof(char *));
		for (size_t i = 0; i < n && k < max; i++) {
			const char *s = json_string_value(json_array_get(list, i));
			if (s && s[0])
				names[k++] = gi_strdup(s);
		}
		*members_out = names;
		*count_out = k;
		*total_out = n;
	}
	json_decref(list);
	obs_oneshot_finish(c, &args, &reply);
	return rc;
}
