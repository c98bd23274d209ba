/*
 * elixir_int.h - what the files of the Elixir reader share (elixir.c walks
 * the tree, elixir_names.c holds the fixed vocabularies). Not a contract:
 * other modules use elixir.h.
 */
#ifndef GIULIA_SOURCE_ELIXIR_INT_H
#define GIULIA_SOURCE_ELIXIR_INT_H

#include <stdbool.h>
#include <stddef.h>

/* The identifiers a call target is dispatched on. */
enum ex_word {
	EX_W_NONE = 0,
	EX_W_MODULE, /* __MODULE__ */
	EX_W_DEFMODULE,
	EX_W_DEFPROTOCOL,
	EX_W_DEFIMPL,
	EX_W_DEF,
	EX_W_DEFP,
	EX_W_DEFMACRO,
	EX_W_DEFMACROP,
	EX_W_DEFGUARD,
	EX_W_DEFGUARDP,
	EX_W_DEFDELEGATE,
	EX_W_DEFSTRUCT,
	EX_W_DEFEXCEPTION,
	EX_W_ALIAS,
	EX_W_IMPORT,
	EX_W_REQUIRE,
	EX_W_USE,
	EX_W_QUOTE,
	EX_W_IF,
	EX_W_UNLESS,
	EX_W_CASE,
	EX_W_COND,
	EX_W_WITH,
	EX_W_FOR,
	EX_W_TRY,
	EX_W_RECEIVE,
};

/* Returns the word for the `len` bytes at `s`, or EX_W_NONE. Thread-safe. */
enum ex_word ex_word_lookup(const char *s, size_t len);

/* True when `name` is imported into every module from Kernel or
 * Kernel.SpecialForms (a call to it that the module does not define itself
 * is not a local call). Thread-safe. */
bool ex_is_kernel_name(const char *name);

/* True when Kernel's `name`/`arity` is a function that compiled code calls
 * as Kernel.name (inspect/1, struct/2, get_in/2...), not a macro or an
 * inlined Erlang built-in. Thread-safe. */
bool ex_is_kernel_function(const char *name, int arity);

/* A call the compiler rewrites into a call of an Erlang module. */
struct ex_inline {
	const char *module, *name; /* the Elixir call: "Kernel", "elem" */
	int arity;
	const char *erl_module, *erl_name; /* what the object code calls: ":erlang", "element" */
	int erl_arity;
};
/* The rewrite of module.name/arity (module in display form, "Kernel" for
 * operators and imported functions), or NULL when the compiler keeps it. */
const struct ex_inline *ex_inline_lookup(const char *module, const char *name, int arity);

/* Functions that take a module, a function name and an argument list as
 * consecutive arguments (spawn(M, :f, args), :timer.apply_after(t, M, :f,
 * args), apply(M, :f, args)...): when `module`.`name`/`arity` is one
 * (`module` NULL: a call imported from Kernel), returns the position of the
 * module argument, sets *apply for apply itself and *extra to the arguments
 * the callee passes before the listed ones (Agent.update/4 passes the
 * state: f gets one more); else -1. Thread-safe. */
int ex_mfa_position(const char *module, const char *name, int arity, bool *apply, int *extra);

/* The functions `use module` defines in the using module when it does not
 * define them itself ("name/arity", NULL-terminated; Elixir 1.14's
 * GenServer, Supervisor, Agent, Task, Application, DynamicSupervisor), or
 * NULL for a module not in the table. Thread-safe. */
const char *const *ex_use_generated(const char *module);

/* The functions of one of Elixir's protocols (Inspect, String.Chars,
 * List.Chars, Enumerable, Collectable) as "name/arity", NULL-terminated,
 * which `@derive` implements; NULL for another protocol. Thread-safe. */
const char *const *ex_protocol_functions(const char *protocol);

#endif
