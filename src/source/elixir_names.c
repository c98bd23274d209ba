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
};

/* The functions of Elixir and OTP that call M.f(args...) for their caller.
 * Kernel's are listed twice: called as imported and as Kernel.f. */
static const struct mfa_entry mfa_functions[] = {
    {NULL, "apply", 3, 0, true},
    {"Kernel", "apply", 3, 0, true},
    {":erlang", "apply", 3, 0, true},
    {NULL, "spawn", 3, 0, false},
    {NULL, "spawn_link", 3, 0, false},
    {NULL, "spawn_monitor", 3, 0, false},
    {"Kernel", "spawn", 3, 0, false},
    {"Kernel", "spawn_link", 3, 0, false},
    {"Kernel", "spawn_monitor", 3, 0, false},
    {":erlang", "spawn", 3, 0, false},
    {":erlang", "spawn_link", 3, 0, false},
    {":erlang", "spawn_monitor", 3, 0, false},
    {":erlang", "spawn_opt", 4, 0, false},
    {":erlang", "spawn", 4, 1, false},
    {":erlang", "spawn_link", 4, 1, false},
    {"Process", "spawn", 4, 0, false},
    {"Node", "spawn", 4, 1, false},
    {"Node", "spawn_link", 4, 1, false},
    {"Node", "spawn_monitor", 4, 1, false},
    {":proc_lib", "spawn", 3, 0, false},
    {":proc_lib", "spawn_link", 3, 0, false},
    {":proc_lib", "start", 3, 0, false},
    {":proc_lib", "start_link", 3, 0, false},
    {":timer", "apply_after", 4, 1, false},
    {":timer", "apply_interval", 4, 1, false},
    {":timer", "apply_repeatedly", 4, 1, false},
    {"Task", "start", 3, 0, false},
    {"Task", "start_link", 3, 0, false},
    {"Task", "async", 3, 0, false},
    {"Task.Supervisor", "start_child", 4, 1, false},
    {"Task.Supervisor", "start_child", 5, 1, false},
    {"Task.Supervisor", "async", 4, 1, false},
    {"Task.Supervisor", "async", 5, 1, false},
    {"Task.Supervisor", "async_nolink", 4, 1, false},
    {"Task.Supervisor", "async_nolink", 5, 1, false},
    {":rpc", "call", 4, 1, false},
    {":rpc", "call", 5, 1, false},
    {":rpc", "cast", 4, 1, false},
    {":erpc", "call", 4, 1, false},
    {":erpc", "call", 5, 1, false},
    {":erpc", "cast", 4, 1, false},
};

int ex_mfa_position(const char *module, const char *name, int arity, bool *apply)
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

struct use_entry {
	const char *module;
	const char *const *functions;
};

/* What `use M` injects, as Elixir 1.14 compiles it (checked against
 * Module.__info__(:functions) of modules that only `use` these). */
static const struct use_entry use_generated[] = {
    {"GenServer", gen_server_functions},
    {"Supervisor", child_spec_only},
    {"Agent", child_spec_only},
    {"Task", child_spec_only},
    {"DynamicSupervisor", child_spec_only},
    {"Application", application_functions},
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
