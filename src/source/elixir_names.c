/*
 * elixir_names.c - the fixed vocabularies of the Elixir reader: the words it
 * dispatches on (definitions, directives, control flow) and the names that
 * Kernel and Kernel.SpecialForms import into every module.
 *
 * Invariant: both tables are sorted by byte order (strcmp), so that lookups
 * are a binary search over (pointer, length) slices of the source.
 */
#include "source/elixir_int.h"

#include <string.h>

struct word_entry {
	const char *name;
	enum ex_word word;
};

/* Sorted by strcmp. */
static const struct word_entry words[] = {
    {"__MODULE__", EX_W_MODULE},
    {"alias", EX_W_ALIAS},
    {"case", EX_W_CASE},
    {"cond", EX_W_COND},
    {"def", EX_W_DEF},
    {"defdelegate", EX_W_DEFDELEGATE},
    {"defexception", EX_W_DEFEXCEPTION},
    {"defguard", EX_W_DEFGUARD},
    {"defguardp", EX_W_DEFGUARDP},
    {"defimpl", EX_W_DEFIMPL},
    {"defmacro", EX_W_DEFMACRO},
    {"defmacrop", EX_W_DEFMACROP},
    {"defmodule", EX_W_DEFMODULE},
    {"defp", EX_W_DEFP},
    {"defprotocol", EX_W_DEFPROTOCOL},
    {"defstruct", EX_W_DEFSTRUCT},
    {"for", EX_W_FOR},
    {"if", EX_W_IF},
    {"import", EX_W_IMPORT},
    {"quote", EX_W_QUOTE},
    {"receive", EX_W_RECEIVE},
    {"require", EX_W_REQUIRE},
    {"try", EX_W_TRY},
    {"unless", EX_W_UNLESS},
    {"use", EX_W_USE},
    {"with", EX_W_WITH},
};

/* Every function and macro of Kernel and Kernel.SpecialForms whose name is an
 * identifier (Elixir 1.14: `Kernel.__info__(:functions)`, `:macros` and
 * `Kernel.SpecialForms.__info__(:macros)`). Sorted by strcmp. */
static const char *const kernel_names[] = {
    "__CALLER__",
    "__DIR__",
    "__ENV__",
    "__MODULE__",
    "__STACKTRACE__",
    "__aliases__",
    "__block__",
    "abs",
    "alias",
    "alias!",
    "and",
    "apply",
    "binary_part",
    "binary_slice",
    "binding",
    "bit_size",
    "byte_size",
    "case",
    "ceil",
    "cond",
    "dbg",
    "def",
    "defdelegate",
    "defexception",
    "defguard",
    "defguardp",
    "defimpl",
    "defmacro",
    "defmacrop",
    "defmodule",
    "defoverridable",
    "defp",
    "defprotocol",
    "defstruct",
    "destructure",
    "div",
    "elem",
    "exit",
    "floor",
    "fn",
    "for",
    "function_exported?",
    "get_and_update_in",
    "get_in",
    "hd",
    "if",
    "import",
    "in",
    "inspect",
    "is_atom",
    "is_binary",
    "is_bitstring",
    "is_boolean",
    "is_exception",
    "is_float",
    "is_function",
    "is_integer",
    "is_list",
    "is_map",
    "is_map_key",
    "is_nil",
    "is_number",
    "is_pid",
    "is_port",
    "is_reference",
    "is_struct",
    "is_tuple",
    "length",
    "macro_exported?",
    "make_ref",
    "map_size",
    "match?",
    "max",
    "min",
    "node",
    "not",
    "or",
    "pop_in",
    "put_elem",
    "put_in",
    "quote",
    "raise",
    "receive",
    "rem",
    "require",
    "reraise",
    "round",
    "self",
    "send",
    "sigil_C",
    "sigil_D",
    "sigil_N",
    "sigil_R",
    "sigil_S",
    "sigil_T",
    "sigil_U",
    "sigil_W",
    "sigil_c",
    "sigil_r",
    "sigil_s",
    "sigil_w",
    "spawn",
    "spawn_link",
    "spawn_monitor",
    "struct",
    "struct!",
    "super",
    "tap",
    "then",
    "throw",
    "tl",
    "to_char_list",
    "to_charlist",
    "to_string",
    "trunc",
    "try",
    "tuple_size",
    "unless",
    "unquote",
    "unquote_splicing",
    "update_in",
    "use",
    "var!",
    "with",
};

/* strcmp of a (pointer, length) slice against a NUL-terminated name. */
static int slice_cmp(const char *s, size_t len, const char *name)
{
	size_t n = strlen(name);
	int r = memcmp(s, name, len < n ? len : n);
	if (r != 0)
		return r;
	return len < n ? -1 : (len > n ? 1 : 0);
}

enum ex_word ex_word_lookup(const char *s, size_t len)
{
	size_t lo = 0, hi = sizeof(words) / sizeof(words[0]);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int r = slice_cmp(s, len, words[mid].name);
		if (r == 0)
			return words[mid].word;
		if (r < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return EX_W_NONE;
}

bool ex_is_kernel_name(const char *name)
{
	size_t lo = 0, hi = sizeof(kernel_names) / sizeof(kernel_names[0]);
	size_t len = strlen(name);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int r = slice_cmp(name, len, kernel_names[mid]);
		if (r == 0)
			return true;
		if (r < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return false;
}

struct mfa_entry {
	const char *module; /* NULL: Kernel, called without a module */
	const char *name;
	int arity;
	int position; /* of the module argument */
	bool apply;
	int extra; /* arguments the callee passes before the listed ones (Agent's state) */
};

/* The functions of Elixir and OTP that call M.f(args...) for their caller.
 * Kernel's are listed twice: called as imported and as Kernel.f. */
static const struct mfa_entry mfa_functions[] = {
    {NULL, "apply", 3, 0, true, 0},
    {"Kernel", "apply", 3, 0, true, 0},
    {":erlang", "apply", 3, 0, true, 0},
    {NULL, "spawn", 3, 0, false, 0},
    {NULL, "spawn_link", 3, 0, false, 0},
    {NULL, "spawn_monitor", 3, 0, false, 0},
    {"Kernel", "spawn", 3, 0, false, 0},
    {"Kernel", "spawn_link", 3, 0, false, 0},
    {"Kernel", "spawn_monitor", 3, 0, false, 0},
    {":erlang", "spawn", 3, 0, false, 0},
    {":erlang", "spawn_link", 3, 0, false, 0},
    {":erlang", "spawn_monitor", 3, 0, false, 0},
    {":erlang", "spawn_opt", 4, 0, false, 0},
    {":erlang", "spawn", 4, 1, false, 0},
    {":erlang", "spawn_link", 4, 1, false, 0},
    {"Process", "spawn", 4, 0, false, 0},
    {"Node", "spawn", 4, 1, false, 0},
    {"Node", "spawn_link", 4, 1, false, 0},
    {"Node", "spawn_monitor", 4, 1, false, 0},
    {":proc_lib", "spawn", 3, 0, false, 0},
    {":proc_lib", "spawn_link", 3, 0, false, 0},
    {":proc_lib", "start", 3, 0, false, 0},
    {":proc_lib", "start_link", 3, 0, false, 0},
    {":timer", "apply_after", 4, 1, false, 0},
    {":timer", "apply_interval", 4, 1, false, 0},
    {":timer", "apply_repeatedly", 4, 1, false, 0},
    {"Task", "start", 3, 0, false, 0},
    {"Task", "start_link", 3, 0, false, 0},
    {"Task", "async", 3, 0, false, 0},
    {"Task.Supervisor", "start_child", 4, 1, false, 0},
    {"Task.Supervisor", "start_child", 5, 1, false, 0},
    {"Task.Supervisor", "async", 4, 1, false, 0},
    {"Task.Supervisor", "async", 5, 1, false, 0},
    {"Task.Supervisor", "async_nolink", 4, 1, false, 0},
    {"Task.Supervisor", "async_nolink", 5, 1, false, 0},
    {":rpc", "call", 4, 1, false, 0},
    {":rpc", "call", 5, 1, false, 0},
    {":rpc", "cast", 4, 1, false, 0},
    {":erpc", "call", 4, 1, false, 0},
    {":erpc", "call", 5, 1, false, 0},
    {":erpc", "cast", 4, 1, false, 0},
    {"Agent", "start", 3, 0, false, 0},
    {"Agent", "start", 4, 0, false, 0},
    {"Agent", "start_link", 3, 0, false, 0},
    {"Agent", "start_link", 4, 0, false, 0},
    {"Agent", "get", 4, 1, false, 1},
    {"Agent", "get", 5, 1, false, 1},
    {"Agent", "update", 4, 1, false, 1},
    {"Agent", "update", 5, 1, false, 1},
    {"Agent", "get_and_update", 4, 1, false, 1},
    {"Agent", "get_and_update", 5, 1, false, 1},
    {"Agent", "cast", 4, 1, false, 1},
};

int ex_mfa_position(const char *module, const char *name, int arity, bool *apply, int *extra)
{
	for (size_t i = 0; i < sizeof(mfa_functions) / sizeof(mfa_functions[0]); i++) {
		const struct mfa_entry *e = &mfa_functions[i];
		if (e->arity != arity || strcmp(e->name, name) != 0)
			continue;
		if ((e->module == NULL) != (module == NULL))
			continue;
		if (module && strcmp(e->module, module) != 0)
			continue;
		*apply = e->apply;
		*extra = e->extra;
		return e->position;
	}
	return -1;
}

static const char *const gen_server_functions[] = {
    "child_spec/1",  "code_change/3", "handle_call/3", "handle_cast/2",
    "handle_info/2", "init/1",        "terminate/2",   NULL,
};
static const char *const child_spec_only[] = {"child_spec/1", NULL};
static const char *const application_functions[] = {"stop/1", NULL};
/* __ex_unit__/0 (its @before_compile: the test module's description) and
 * __ex_unit__/2 (ExUnit.Callbacks: setup and setup_all, made even with none) */
static const char *const ex_unit_case_functions[] = {"__ex_unit__/0", "__ex_unit__/2", NULL};

struct use_entry {
	const char *module;
	const char *const *functions;
};

/* What `use M` injects, as Elixir 1.14 compiles it (checked against
 * Module.__info__(:functions) of modules that only `use` these). Registry
 * has no __using__: it is started as a child, not `use`d. */
static const struct use_entry use_generated[] = {
    {"GenServer", gen_server_functions},
    {"Supervisor", child_spec_only},
    {"Agent", child_spec_only},
    {"Task", child_spec_only},
    {"DynamicSupervisor", child_spec_only},
    {"Application", application_functions},
    {"ExUnit.Case", ex_unit_case_functions},
};

const char *const *ex_use_generated(const char *module)
{
	for (size_t i = 0; i < sizeof(use_generated) / sizeof(use_generated[0]); i++)
		if (strcmp(use_generated[i].module, module) == 0)
			return use_generated[i].functions;
	return NULL;
}

/* The functions of Elixir's own protocols, which an `@derive` generates in
 * the implementation module (Elixir 1.14). */
static const char *const inspect_functions[] = {"inspect/2", NULL};
static const char *const string_chars_functions[] = {"to_string/1", NULL};
static const char *const list_chars_functions[] = {"to_charlist/1", NULL};
static const char *const enumerable_functions[] = {"count/1", "member?/2", "reduce/3", "slice/1",
                                                   NULL};
static const char *const collectable_functions[] = {"into/1", NULL};

static const struct use_entry protocol_functions[] = {
    {"Inspect", inspect_functions},         {"String.Chars", string_chars_functions},
    {"List.Chars", list_chars_functions},   {"Enumerable", enumerable_functions},
    {"Collectable", collectable_functions},
};

const char *const *ex_protocol_functions(const char *protocol)
{
	for (size_t i = 0; i < sizeof(protocol_functions) / sizeof(protocol_functions[0]); i++)
		if (strcmp(protocol_functions[i].module, protocol) == 0)
			return protocol_functions[i].functions;
	return NULL;
}

/* Kernel's functions that stay calls to Kernel in the object code (Elixir
 * 1.14; the others are macros or are inlined to :erlang). */
static const struct {
	const char *name;
	int arity;
} kernel_functions[] = {
    {"inspect", 1},
    {"inspect", 2},
    {"struct", 1},
    {"struct", 2},
    {"struct!", 1},
    {"struct!", 2},
    {"get_in", 2},
    {"put_in", 3},
    {"update_in", 3},
    {"pop_in", 2},
    {"get_and_update_in", 3},
    {"macro_exported?", 3},
    {"binary_slice", 2},
    {"binary_slice", 3},
    {"=~", 2},
};

bool ex_is_kernel_function(const char *name, int arity)
{
	for (size_t i = 0; i < sizeof(kernel_functions) / sizeof(kernel_functions[0]); i++)
		if (kernel_functions[i].arity == arity &&
		    strcmp(kernel_functions[i].name, name) == 0)
			return true;
	return false;
}

/* The calls that Elixir 1.14's compiler rewrites into calls of Erlang
 * modules (lib/elixir/src/elixir_rewrite.erl, its inline and rewrite
 * rules, in the order of their Elixir module, name and arity by strcmp):
 * `Map.keys(m)` is `:maps.keys/1` and `elem(t, 0)` `:erlang.element/2` in
 * the object code. Then OTP 25's compiler rewrites three of them in turn,
 * as this table says: :maps.get/2 is :erlang.map_get/2, :maps.is_key/2
 * :erlang.is_map_key/2, and :maps.put/3 a map update (no call). */
static const struct ex_inline inlines[] = {
    {"Atom", "to_charlist", 1, ":erlang", "atom_to_list", 1},
    {"Atom", "to_string", 1, ":erlang", "atom_to_binary", 1},
    {"Bitwise", "&&&", 2, ":erlang", "band", 2},
    {"Bitwise", "<<<", 2, ":erlang", "bsl", 2},
    {"Bitwise", ">>>", 2, ":erlang", "bsr", 2},
    {"Bitwise", "^^^", 2, ":erlang", "bxor", 2},
    {"Bitwise", "band", 2, ":erlang", "band", 2},
    {"Bitwise", "bnot", 1, ":erlang", "bnot", 1},
    {"Bitwise", "bor", 2, ":erlang", "bor", 2},
    {"Bitwise", "bsl", 2, ":erlang", "bsl", 2},
    {"Bitwise", "bsr", 2, ":erlang", "bsr", 2},
    {"Bitwise", "bxor", 2, ":erlang", "bxor", 2},
    {"Bitwise", "|||", 2, ":erlang", "bor", 2},
    {"Bitwise", "~~~", 1, ":erlang", "bnot", 1},
    {"Function", "capture", 3, ":erlang", "make_fun", 3},
    {"Function", "info", 1, ":erlang", "fun_info", 1},
    {"Function", "info", 2, ":erlang", "fun_info", 2},
    {"IO", "iodata_length", 1, ":erlang", "iolist_size", 1},
    {"IO", "iodata_to_binary", 1, ":erlang", "iolist_to_binary", 1},
    {"Integer", "to_charlist", 1, ":erlang", "integer_to_list", 1},
    {"Integer", "to_charlist", 2, ":erlang", "integer_to_list", 2},
    {"Integer", "to_string", 1, ":erlang", "integer_to_binary", 1},
    {"Integer", "to_string", 2, ":erlang", "integer_to_binary", 2},
    {"Kernel", "!=", 2, ":erlang", "/=", 2},
    {"Kernel", "!==", 2, ":erlang", "=/=", 2},
    {"Kernel", "*", 2, ":erlang", "*", 2},
    {"Kernel", "+", 1, ":erlang", "+", 1},
    {"Kernel", "+", 2, ":erlang", "+", 2},
    {"Kernel", "++", 2, ":erlang", "++", 2},
    {"Kernel", "-", 1, ":erlang", "-", 1},
    {"Kernel", "-", 2, ":erlang", "-", 2},
    {"Kernel", "--", 2, ":erlang", "--", 2},
    {"Kernel", "/", 2, ":erlang", "/", 2},
    {"Kernel", "<", 2, ":erlang", "<", 2},
    {"Kernel", "<=", 2, ":erlang", "=<", 2},
    {"Kernel", "==", 2, ":erlang", "==", 2},
    {"Kernel", "===", 2, ":erlang", "=:=", 2},
    {"Kernel", ">", 2, ":erlang", ">", 2},
    {"Kernel", ">=", 2, ":erlang", ">=", 2},
    {"Kernel", "abs", 1, ":erlang", "abs", 1},
    {"Kernel", "apply", 2, ":erlang", "apply", 2},
    {"Kernel", "apply", 3, ":erlang", "apply", 3},
    {"Kernel", "binary_part", 3, ":erlang", "binary_part", 3},
    {"Kernel", "bit_size", 1, ":erlang", "bit_size", 1},
    {"Kernel", "byte_size", 1, ":erlang", "byte_size", 1},
    {"Kernel", "ceil", 1, ":erlang", "ceil", 1},
    {"Kernel", "div", 2, ":erlang", "div", 2},
    {"Kernel", "elem", 2, ":erlang", "element", 2},
    {"Kernel", "exit", 1, ":erlang", "exit", 1},
    {"Kernel", "floor", 1, ":erlang", "floor", 1},
    {"Kernel", "function_exported?", 3, ":erlang", "function_exported", 3},
    {"Kernel", "hd", 1, ":erlang", "hd", 1},
    {"Kernel", "is_atom", 1, ":erlang", "is_atom", 1},
    {"Kernel", "is_binary", 1, ":erlang", "is_binary", 1},
    {"Kernel", "is_bitstring", 1, ":erlang", "is_bitstring", 1},
    {"Kernel", "is_boolean", 1, ":erlang", "is_boolean", 1},
    {"Kernel", "is_float", 1, ":erlang", "is_float", 1},
    {"Kernel", "is_function", 1, ":erlang", "is_function", 1},
    {"Kernel", "is_function", 2, ":erlang", "is_function", 2},
    {"Kernel", "is_integer", 1, ":erlang", "is_integer", 1},
    {"Kernel", "is_list", 1, ":erlang", "is_list", 1},
    {"Kernel", "is_map", 1, ":erlang", "is_map", 1},
    {"Kernel", "is_map_key", 2, ":erlang", "is_map_key", 2},
    {"Kernel", "is_number", 1, ":erlang", "is_number", 1},
    {"Kernel", "is_pid", 1, ":erlang", "is_pid", 1},
    {"Kernel", "is_port", 1, ":erlang", "is_port", 1},
    {"Kernel", "is_reference", 1, ":erlang", "is_reference", 1},
    {"Kernel", "is_tuple", 1, ":erlang", "is_tuple", 1},
    {"Kernel", "length", 1, ":erlang", "length", 1},
    {"Kernel", "make_ref", 0, ":erlang", "make_ref", 0},
    {"Kernel", "map_size", 1, ":erlang", "map_size", 1},
    {"Kernel", "max", 2, ":erlang", "max", 2},
    {"Kernel", "min", 2, ":erlang", "min", 2},
    {"Kernel", "node", 0, ":erlang", "node", 0},
    {"Kernel", "node", 1, ":erlang", "node", 1},
    {"Kernel", "not", 1, ":erlang", "not", 1},
    {"Kernel", "put_elem", 3, ":erlang", "setelement", 3},
    {"Kernel", "rem", 2, ":erlang", "rem", 2},
    {"Kernel", "round", 1, ":erlang", "round", 1},
    {"Kernel", "self", 0, ":erlang", "self", 0},
    {"Kernel", "send", 2, ":erlang", "send", 2},
    {"Kernel", "spawn", 1, ":erlang", "spawn", 1},
    {"Kernel", "spawn", 3, ":erlang", "spawn", 3},
    {"Kernel", "spawn_link", 1, ":erlang", "spawn_link", 1},
    {"Kernel", "spawn_link", 3, ":erlang", "spawn_link", 3},
    {"Kernel", "spawn_monitor", 1, ":erlang", "spawn_monitor", 1},
    {"Kernel", "spawn_monitor", 3, ":erlang", "spawn_monitor", 3},
    {"Kernel", "throw", 1, ":erlang", "throw", 1},
    {"Kernel", "tl", 1, ":erlang", "tl", 1},
    {"Kernel", "trunc", 1, ":erlang", "trunc", 1},
    {"Kernel", "tuple_size", 1, ":erlang", "tuple_size", 1},
    {"List", "to_atom", 1, ":erlang", "list_to_atom", 1},
    {"List", "to_existing_atom", 1, ":erlang", "list_to_existing_atom", 1},
    {"List", "to_float", 1, ":erlang", "list_to_float", 1},
    {"List", "to_integer", 1, ":erlang", "list_to_integer", 1},
    {"List", "to_integer", 2, ":erlang", "list_to_integer", 2},
    {"List", "to_tuple", 1, ":erlang", "list_to_tuple", 1},
    {"Map", "delete", 2, ":maps", "remove", 2},
    {"Map", "fetch", 2, ":maps", "find", 2},
    {"Map", "fetch!", 2, ":erlang", "map_get", 2},
    {"Map", "has_key?", 2, ":erlang", "is_map_key", 2},
    {"Map", "keys", 1, ":maps", "keys", 1},
    {"Map", "merge", 2, ":maps", "merge", 2},
    {"Map", "replace!", 3, ":maps", "update", 3},
    {"Map", "to_list", 1, ":maps", "to_list", 1},
    {"Map", "values", 1, ":maps", "values", 1},
    {"Node", "list", 0, ":erlang", "nodes", 0},
    {"Node", "list", 1, ":erlang", "nodes", 1},
    {"Node", "spawn", 2, ":erlang", "spawn", 2},
    {"Node", "spawn", 3, ":erlang", "spawn_opt", 3},
    {"Node", "spawn", 4, ":erlang", "spawn", 4},
    {"Node", "spawn", 5, ":erlang", "spawn_opt", 5},
    {"Node", "spawn_link", 2, ":erlang", "spawn_link", 2},
    {"Node", "spawn_link", 4, ":erlang", "spawn_link", 4},
    {"Node", "spawn_monitor", 2, ":erlang", "spawn_monitor", 2},
    {"Node", "spawn_monitor", 4, ":erlang", "spawn_monitor", 4},
    {"Port", "close", 1, ":erlang", "port_close", 1},
    {"Port", "command", 2, ":erlang", "port_command", 2},
    {"Port", "command", 3, ":erlang", "port_command", 3},
    {"Port", "connect", 2, ":erlang", "port_connect", 2},
    {"Port", "demonitor", 1, ":erlang", "demonitor", 1},
    {"Port", "demonitor", 2, ":erlang", "demonitor", 2},
    {"Port", "list", 0, ":erlang", "ports", 0},
    {"Port", "monitor", 1, ":erlang", "monitor", 2},
    {"Port", "open", 2, ":erlang", "open_port", 2},
    {"Process", "alive?", 1, ":erlang", "is_process_alive", 1},
    {"Process", "cancel_timer", 1, ":erlang", "cancel_timer", 1},
    {"Process", "cancel_timer", 2, ":erlang", "cancel_timer", 2},
    {"Process", "demonitor", 1, ":erlang", "demonitor", 1},
    {"Process", "demonitor", 2, ":erlang", "demonitor", 2},
    {"Process", "exit", 2, ":erlang", "exit", 2},
    {"Process", "flag", 2, ":erlang", "process_flag", 2},
    {"Process", "flag", 3, ":erlang", "process_flag", 3},
    {"Process", "get", 0, ":erlang", "get", 0},
    {"Process", "get_keys", 0, ":erlang", "get_keys", 0},
    {"Process", "get_keys", 1, ":erlang", "get_keys", 1},
    {"Process", "group_leader", 0, ":erlang", "group_leader", 0},
    {"Process", "group_leader", 2, ":erlang", "group_leader", 2},
    {"Process", "hibernate", 3, ":erlang", "hibernate", 3},
    {"Process", "link", 1, ":erlang", "link", 1},
    {"Process", "list", 0, ":erlang", "processes", 0},
    {"Process", "monitor", 1, ":erlang", "monitor", 2},
    {"Process", "read_timer", 1, ":erlang", "read_timer", 1},
    {"Process", "registered", 0, ":erlang", "registered", 0},
    {"Process", "send", 3, ":erlang", "send", 3},
    {"Process", "send_after", 3, ":erlang", "send_after", 3},
    {"Process", "send_after", 4, ":erlang", "send_after", 4},
    {"Process", "spawn", 2, ":erlang", "spawn_opt", 2},
    {"Process", "spawn", 4, ":erlang", "spawn_opt", 4},
    {"Process", "unlink", 1, ":erlang", "unlink", 1},
    {"Process", "unregister", 1, ":erlang", "unregister", 1},
    {"String", "duplicate", 2, ":binary", "copy", 2},
    {"String", "to_atom", 1, ":erlang", "binary_to_atom", 2},
    {"String", "to_existing_atom", 1, ":erlang", "binary_to_existing_atom", 2},
    {"String", "to_float", 1, ":erlang", "binary_to_float", 1},
    {"String", "to_integer", 1, ":erlang", "binary_to_integer", 1},
    {"String", "to_integer", 2, ":erlang", "binary_to_integer", 2},
    {"System", "monotonic_time", 0, ":erlang", "monotonic_time", 0},
    {"System", "os_time", 0, ":os", "system_time", 0},
    {"System", "system_time", 0, ":erlang", "system_time", 0},
    {"System", "time_offset", 0, ":erlang", "time_offset", 0},
    {"System", "unique_integer", 0, ":erlang", "unique_integer", 0},
    {"System", "unique_integer", 1, ":erlang", "unique_integer", 1},
    {"Tuple", "append", 2, ":erlang", "append_element", 2},
    {"Tuple", "delete_at", 2, ":erlang", "delete_element", 2},
    {"Tuple", "duplicate", 2, ":erlang", "make_tuple", 2},
    {"Tuple", "insert_at", 3, ":erlang", "insert_element", 3},
    {"Tuple", "to_list", 1, ":erlang", "tuple_to_list", 1},
};

const struct ex_inline *ex_inline_lookup(const char *module, const char *name, int arity)
{
	size_t lo = 0, hi = sizeof(inlines) / sizeof(inlines[0]);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct ex_inline *e = &inlines[mid];
		int r = strcmp(module, e->module);
		if (r == 0)
			r = strcmp(name, e->name);
		if (r == 0)
			r = arity - e->arity;
		if (r == 0)
			return e;
		if (r < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}
