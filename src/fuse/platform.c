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
