/*
 * modname.h - module names in the one form Giulia writes them everywhere
 * (graph, store, snapshots, profiles, API), and the atom text they stand for.
 *
 * An Elixir module is written as in Elixir source, without the "Elixir."
 * prefix ("Nexus.Repo"); an Erlang module with a leading colon (":ets",
 * ":gen_server"). Both the source readers and the observer need the
 * conversion, so it lives here, below both. Pure functions: thread-safe.
 */
#ifndef GIULIA_BASE_MODNAME_H
#define GIULIA_BASE_MODNAME_H

#include <stddef.h>

/* Module names: `atom` is the atom text ("Elixir.Foo.Bar", "ets"); writes
 * "Foo.Bar" / ":ets" into `out` of `size` bytes. Returns 0 or GI_ETOOBIG. */
int gi_module_display_name(const char *atom, char *out, size_t size);
/* The reverse: "Foo.Bar" -> "Elixir.Foo.Bar", ":ets" -> "ets". Returns 0 or
 * GI_ETOOBIG. */
int gi_module_atom_name(const char *display, char *out, size_t size);

#endif
