/*
 * datalayer.c - what the profile knows of database drivers and of Ecto's
 * Repo API: the one table that says which modules are databases and what
 * each of their functions does to the data (docs/RULES.md, "The workload
 * model", prints it).
 *
 * This is platform knowledge (drivers and libraries anyone may use), never a
 * name of an application. A module is in the table when talking to it is a
 * database round trip; :ets, :dets, :persistent_term and process state are
 * not databases (they are local memory, the remedy rather than the cost).
 *
 * Effects: READ and WRITE where the function says so; UNKNOWN where the
 * statement decides (`:sqlite3.sql_exec/3`, `Postgrex.query/4`: a SELECT or
 * an UPDATE alike), and the classifier falls back to the caller's name;
 * NONE for connection management (open, close, start_link), which marks its
 * caller as a data layer without being an operation.
 */
#include <string.h>

#include "base/str.h"
#include "fuse/fuse_int.h"

struct driver_function {
	const char *module;   /* display form: ":sqlite3", "Postgrex" */
	const char *function; /* NULL: every other function of the module */
	enum fuse_effect effect;
};

#define R FUSE_EFFECT_READ
#define W FUSE_EFFECT_WRITE
#define U FUSE_EFFECT_UNKNOWN
#define N FUSE_EFFECT_NONE

static const struct driver_function drivers[] = {
    /* SQLite: erlang-p1-sqlite3 (Debian), exqlite, esqlite. */
    {":sqlite3", "read", R},
    {":sqlite3", "read_timeout", R},
    {":sqlite3", "read_all_timeout", R},
    {":sqlite3", "list_tables_timeout", R},
    {":sqlite3", "table_info_timeout", R},
    {":sqlite3", "write_timeout", W},
    {":sqlite3", "write_many_timeout", W},
    {":sqlite3", "update_timeout", W},
    {":sqlite3", "delete_timeout", W},
    {":sqlite3", "create_table_timeout", W},
    {":sqlite3", "drop_table_timeout", W},
    {":sqlite3", "vacuum", N},
    {":sqlite3", "changes", N},
    {":sqlite3", "read_all", R},
    {":sqlite3", "list_tables", R},
    {":sqlite3", "table_info", R},
    {":sqlite3", "write", W},
    {":sqlite3", "write_many", W},
    {":sqlite3", "update", W},
    {":sqlite3", "delete", W},
    {":sqlite3", "create_table", W},
    {":sqlite3", "drop_table", W},
    {":sqlite3", "add_columns", W},
    {":sqlite3", "open", N},
    {":sqlite3", "close", N},
    {":sqlite3", "start_link", N},
    {":sqlite3", NULL, U}, /* sql_exec, sql_exec_timeout, sql_exec_script, prepare, next */
    {"Exqlite.Sqlite3", "open", N},
    {"Exqlite.Sqlite3", "close", N},
    {"Exqlite.Sqlite3", NULL, U},
    {"Exqlite", NULL, U},
    {":esqlite3", "open", N},
    {":esqlite3", "close", N},
    {":esqlite3", NULL, U},
    /* PostgreSQL: Postgrex, epgsql, p1_pgsql (Debian), pgo. */
    {"Postgrex", "start_link", N},
    {"Postgrex", NULL, U},
    {":epgsql", "connect", N},
    {":epgsql", "close", N},
    {":epgsql", NULL, U},
    {":pgsql", "connect", N},
    {":pgsql", "terminate", N},
    {":pgsql", NULL, U},
    {":pgo", NULL, U},
    /* MySQL: MyXQL, mysql-otp. */
    {"MyXQL", "start_link", N},
    {"MyXQL", NULL, U},
    {":mysql", "start_link", N},
    {":mysql", "stop", N},
    {":mysql", NULL, U},
    /* ODBC (OTP). */
    {":odbc", "connect", N},
    {":odbc", "disconnect", N},
    {":odbc", "select", R},
    {":odbc", "select_count", R},
    {":odbc", "first", R},
    {":odbc", "last", R},
    {":odbc", "next", R},
    {":odbc", "prev", R},
    {":odbc", "commit", W},
    {":odbc", NULL, U},
    /* Mnesia (OTP): transactions take the effect of the fun they run. */
    {":mnesia", "read", R},
    {":mnesia", "dirty_read", R},
    {":mnesia", "wread", R},
    {":mnesia", "index_read", R},
    {":mnesia", "dirty_index_read", R},
    {":mnesia", "match_object", R},
    {":mnesia", "dirty_match_object", R},
    {":mnesia", "index_match_object", R},
    {":mnesia", "select", R},
    {":mnesia", "dirty_select", R},
    {":mnesia", "all_keys", R},
    {":mnesia", "dirty_all_keys", R},
    {":mnesia", "first", R},
    {":mnesia", "next", R},
    {":mnesia", "last", R},
    {":mnesia", "prev", R},
    {":mnesia", "dirty_first", R},
    {":mnesia", "dirty_next", R},
    {":mnesia", "foldl", R},
    {":mnesia", "foldr", R},
    {":mnesia", "write", W},
    {":mnesia", "s_write", W},
    {":mnesia", "dirty_write", W},
    {":mnesia", "delete", W},
    {":mnesia", "s_delete", W},
    {":mnesia", "dirty_delete", W},
    {":mnesia", "delete_object", W},
    {":mnesia", "dirty_delete_object", W},
    {":mnesia", "dirty_update_counter", W},
    {":mnesia", "clear_table", W},
    {":mnesia", "create_table", W},
    {":mnesia", "delete_table", W},
    {":mnesia", "transaction", U},
    {":mnesia", "sync_transaction", U},
    {":mnesia", "activity", U},
    {":mnesia", "async_dirty", U},
    {":mnesia", "sync_dirty", U},
    {":mnesia", NULL, N}, /* start, stop, wait_for_tables, table_info, system_info */
    /* Redis: Redix, eredis (the command decides). */
    {"Redix", "start_link", N},
    {"Redix", "stop", N},
    {"Redix", NULL, U},
    {":eredis", "start_link", N},
    {":eredis", "stop", N},
    {":eredis", NULL, U},
    /* MongoDB (mongodb_driver). */
    {"Mongo", "find", R},
    {"Mongo", "find_one", R},
    {"Mongo", "count", R},
    {"Mongo", "count_documents", R},
    {"Mongo", "aggregate", R},
    {"Mongo", "distinct", R},
    {"Mongo", "insert_one", W},
    {"Mongo", "insert_many", W},
    {"Mongo", "update_one", W},
    {"Mongo", "update_many", W},
    {"Mongo", "replace_one", W},
    {"Mongo", "delete_one", W},
    {"Mongo", "delete_many", W},
    {"Mongo", "start_link", N},
    {"Mongo", NULL, U},
    /* Ecto: a `use Ecto.Repo` module's functions call these. */
    {"Ecto.Adapters.SQL", NULL, U}, /* query, query!, stream */
    {"Ecto.Repo.Queryable", "update_all", W},
    {"Ecto.Repo.Queryable", "delete_all", W},
    {"Ecto.Repo.Queryable", NULL, R}, /* all, get, get_by, one, exists?, aggregate */
    {"Ecto.Repo.Schema", NULL, W},    /* insert, update, delete, insert_all */
    {"Ecto.Repo.Preloader", NULL, R},
    {"Ecto.Repo.Transaction", NULL, U},
};

#undef R
#undef W
#undef U
#undef N

/* A trailing ? or ! does not change what a function does (get! reads). */
static bool same_function(const char *name, const char *entry)
{
	size_t n = strlen(name);
	while (n > 0 && (name[n - 1] == '?' || name[n - 1] == '!'))
		n--;
	return strlen(entry) == n && strncmp(name, entry, n) == 0;
}

bool fuse_driver_module(const char *module)
{
	if (!module)
		return false;
	for (size_t i = 0; i < sizeof(drivers) / sizeof(drivers[0]); i++)
		if (strcmp(drivers[i].module, module) == 0)
			return true;
	return false;
}

bool fuse_driver_effect(const char *module, const char *function, enum fuse_effect *effect)
{
	bool known = false;
	if (!module || !function)
		return false;
	for (size_t i = 0; i < sizeof(drivers) / sizeof(drivers[0]); i++) {
		const struct driver_function *d = &drivers[i];
		if (strcmp(d->module, module) != 0)
			continue;
		if (!d->function) {
			*effect = d->effect;
			known = true;
			break;
		}
		if (same_function(function, d->function)) {
			*effect = d->effect;
			return true;
		}
	}
	return known;
}

enum fuse_effect fuse_repo_api_effect(const char *function)
{
	static const char *const reads[] = {"all",       "get",    "get_by",  "one",    "exists",
	                                    "aggregate", "stream", "preload", "reload", NULL};
	static const char *const writes[] = {"insert",           "update",     "delete",
	                                     "insert_or_update", "insert_all", "update_all",
	                                     "delete_all",       NULL};
	if (!function)
		return FUSE_EFFECT_NONE;
	for (size_t i = 0; reads[i]; i++)
		if (same_function(function, reads[i]))
			return FUSE_EFFECT_READ;
	for (size_t i = 0; writes[i]; i++)
		if (same_function(function, writes[i]))
			return FUSE_EFFECT_WRITE;
	if (same_function(function, "transaction"))
		return FUSE_EFFECT_UNKNOWN;
	return FUSE_EFFECT_NONE;
}

const char *fuse_effect_name(enum fuse_effect e)
{
	switch (e) {
	case FUSE_EFFECT_READ:
		return "read";
	case FUSE_EFFECT_WRITE:
		return "write";
	case FUSE_EFFECT_UNKNOWN:
		return "unknown";
	case FUSE_EFFECT_NONE:
		break;
	}
	return "none";
}
