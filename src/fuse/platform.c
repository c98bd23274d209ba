/*
 * platform.c - what the profile knows of the runtime's own process plumbing
 * (see fuse_int.h). This is platform knowledge (OTP and Elixir), never a
 * name of an application: a rule that needs an application's names is wrong.
 */
#include <string.h>

#include "base/str.h"
#include "fuse/fuse_int.h"

bool fuse_module_is_wrapper(const char *module)
{
	/* How a process was started or how it waits: proc_lib and the generic
	 * behaviours' loops, the spawn(fn) trampoline (:erlang.apply/2), the
	 * evaluators and Elixir's script compiler (`elixir -e`, `mix run`
	 * evaluate through :elixir_compiler_N modules), tasks, rpc. */
	static const char *const exact[] = {":proc_lib",  ":erlang",         ":erl_eval",
	                                    ":elixir",    ":elixir_eval",    ":elixir_compiler",
	                                    ":gen",       ":gen_server",     ":gen_statem",
	                                    ":gen_event", ":supervisor",     ":supervisor_bridge",
	                                    ":rpc",       ":erpc",           ":timer",
	                                    "Task",       "Task.Supervised", NULL};
	if (!module)
		return false;
	for (size_t i = 0; exact[i]; i++)
		if (strcmp(module, exact[i]) == 0)
			return true;
	return gi_str_starts_with(module, ":elixir_compiler_");
}

bool fuse_module_is_platform(const char *module)
{
	/* Elixir's standard library, by top-level name (a dotted name below
	 * one of them, Logger.Backends.Console, is platform too). */
	static const char *const elixir[] = {"Access",      "Agent",
	                                     "Application", "Base",
	                                     "Calendar",    "Code",
	                                     "Date",        "DateTime",
	                                     "Duration",    "DynamicSupervisor",
	                                     "Enum",        "Exception",
	                                     "ExUnit",      "File",
	                                     "Float",       "Function",
	                                     "GenEvent",    "GenServer",
	                                     "IEx",         "Inspect",
	                                     "Integer",     "IO",
	                                     "Kernel",      "Keyword",
	                                     "List",        "Logger",
	                                     "Macro",       "Map",
	                                     "MapSet",      "Mix",
	                                     "Module",      "NaiveDateTime",
	                                     "Node",        "OptionParser",
	                                     "Path",        "Port",
	                                     "Process",     "Protocol",
	                                     "Range",       "Record",
	                                     "Regex",       "Registry",
	                                     "Stream",      "String",
	                                     "StringIO",    "Supervisor",
	                                     "System",      "Task",
	                                     "Time",        "Tuple",
	                                     "URI",         "Version",
	                                     "EEx",         NULL};
	/* OTP: the runtime's and its applications' modules most often seen
	 * working in a profile (exact names or a prefix with '_'). */
	static const char *const otp[] = {":application",
	                                  ":code",
	                                  ":code_server",
	                                  ":erl_prim_loader",
	                                  ":erts",
	                                  ":ets",
	                                  ":file",
	                                  ":gen_tcp",
	                                  ":gen_udp",
	                                  ":global",
	                                  ":group",
	                                  ":httpc",
	                                  ":httpd",
	                                  ":inet",
	                                  ":io",
	                                  ":kernel",
	                                  ":lists",
	                                  ":logger",
	                                  ":maps",
	                                  ":mnesia",
	                                  ":net_kernel",
	                                  ":os",
	                                  ":prim_file",
	                                  ":prim_inet",
	                                  ":pg",
	                                  ":ssl",
	                                  ":tls",
	                                  ":dtls",
	                                  ":user",
	                                  ":standard_error",
	                                  ":disk_log",
	                                  ":dist",
	                                  ":inet_tcp",
	                                  ":auth",
	                                  ":erl_signal_handler",
	                                  ":init",
	                                  ":heart",
	                                  ":error_logger",
	                                  ":sqlite3",
	                                  ":odbc",
	                                  ":crypto",
	                                  ":public_key",
	                                  ":zlib",
	                                  ":binary",
	                                  ":unicode",
	                                  NULL};
	if (!module)
		return false;
	if (fuse_module_is_wrapper(module))
		return true;
	for (size_t i = 0; elixir[i]; i++) {
		size_t n = strlen(elixir[i]);
		if (strncmp(module, elixir[i], n) == 0 && (module[n] == '\0' || module[n] == '.'))
			return true;
	}
	for (size_t i = 0; otp[i]; i++) {
		size_t n = strlen(otp[i]);
		if (strncmp(module, otp[i], n) == 0 && (module[n] == '\0' || module[n] == '_'))
			return true;
	}
	return false;
}

bool fuse_module_is_logger(const char *module)
{
	if (!module)
		return false;
	if (strcmp(module, "Logger") == 0 || gi_str_starts_with(module, "Logger.") ||
	    strcmp(module, ":logger") == 0 || gi_str_starts_with(module, ":logger_") ||
	    strcmp(module, ":error_logger") == 0)
		return true;
	return false;
}
