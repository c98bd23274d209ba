/*
 * query.c - placeholder until the static engine lands (see query.h).
 */
#include "graph/query.h"

#include "base/error.h"

int kg_index_project(const char *root, const char *db_path, const struct kg_index_options *opt,
                     json_t **summary_out)
{
	(void)root;
	(void)db_path;
	(void)opt;
	*summary_out = NULL;
	return GI_EUNSUPPORTED;
}

int kg_db_open(const char *db_path, bool create, struct kg_db **out)
{
	(void)db_path;
	(void)create;
	*out = NULL;
	return GI_EUNSUPPORTED;
}

void kg_db_close(struct kg_db *db)
{
	(void)db;
}

char *kg_db_default_path(const char *root)
{
	(void)root;
	return NULL;
}

int kg_query(struct kg_db *db, const char *name, const struct kg_query_params *p, json_t **out)
{
	(void)db;
	(void)name;
	(void)p;
	*out = NULL;
	return GI_EUNSUPPORTED;
}

int kg_project_modules(struct kg_db *db, json_t **out_array)
{
	(void)db;
	*out_array = NULL;
	return GI_EUNSUPPORTED;
}
