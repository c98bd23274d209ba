/*
 * datalayer.c - what the profile knows of database drivers and of Ecto's
 * Repo API: the one table that says which modules are databases and what
 * each of their functions does to the data (docs/RULES.md, "The workload
 * model", prints it).
 *
 * This is platform knowledge (drivers and libraries anyone may use), never a
 * name of an application. A module is in the table when it is where data
 * lives outside a process's own memory. Each says where that is
 * (fuse_driver_storage, docs/RULES.md "Where data lives"): outside the VM
 * (drivers that talk over sockets or ports: a round trip per call), DETS
 * (a file behind one server process), or mnesia (ETS tables of the node for
 * ram_copies and disc_copies, DETS for disc_only_copies). :ets,
 * :persistent_term and process state are not in the table: they are local
 * memory, the remedy rather than the cost.
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
    /* Schema changes (create_table, delete_table at start-up) are not
     * operations on the data, and do not make their caller a data layer. */
    {":mnesia", "transaction", U},
    {":mnesia", "sync_transaction", U},
    {":mnesia", "activity", U},
    {":mnesia", "async_dirty", U},
    {":mnesia", "sync_dirty", U},
    {":mnesia", NULL, N}, /* start, stop, wait_for_tables, table_info, system_info */
    /* DETS (OTP): a file read through the dets server process; local, but
     * every lookup is file I/O serialised through one process. */
    {":dets", "lookup", R},
    {":dets", "member", R},
    {":dets", "match", R},
    {":dets", "match_object", R},
    {":dets", "select", R},
    {":dets", "first", R},
    {":dets", "next", R},
    {":dets", "foldl", R},
    {":dets", "foldr", R},
    {":dets", "traverse", R},
    {":dets", "insert", W},
    {":dets", "insert_new", W},
    {":dets", "delete", W},
    {":dets", "delete_object", W},
    {":dets", "match_delete", W},
    {":dets", "select_delete", W},
    {":dets", "update_counter", W},
    {":dets", "delete_all_objects", W},
    {":dets", NULL, N}, /* open_file, close, info, sync */
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

enum fuse_storage fuse_driver_storage(const char *module)
{
	if (!module || !fuse_driver_module(module))
		return FUSE_STORAGE_NONE;
	/* mnesia's ram_copies and disc_copies tables are ETS tables of the
	 * node; only disc_only_copies are DETS, which the node's facts tell
	 * (profile.storage), not the call. */
	if (strcmp(module, ":mnesia") == 0)
		return FUSE_STORAGE_MNESIA;
	if (strcmp(module, ":dets") == 0)
		return FUSE_STORAGE_DETS;
	return FUSE_STORAGE_EXTERNAL;
}

const char *fuse_storage_name(enum fuse_storage s)
{
	switch (s) {
	case FUSE_STORAGE_EXTERNAL:
		return "external";
	case FUSE_STORAGE_MNESIA:
		return "mnesia";
	case FUSE_STORAGE_DETS:
		return "dets";
	case FUSE_STORAGE_NONE:
		break;
	}
	return "none";
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
