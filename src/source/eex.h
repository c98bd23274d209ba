/*
 * eex.h - EEx templates (.eex, .heex, .leex): the Elixir code between their
 * `<% %>` tags, read as the body of one function of a module named after the
 * template, so that the functions a template calls have a caller.
 *
 * Thread-safe as ex_parse is.
 */
#ifndef GIULIA_SOURCE_EEX_H
#define GIULIA_SOURCE_EEX_H

#include <stdbool.h>
#include <stddef.h>

#include "source/facts.h"

/* The prefix of a template's module name: "(template) lib/x/y.html.heex".
 * Not an Elixir alias, so it never clashes with a module of the source. */
#define EEX_MODULE_PREFIX "(template) "

/* True when `path` names an EEx template (.eex, .heex, .leex). */
bool eex_is_template(const char *path);

/* Reads the template `text` (`len` bytes; `path`, relative to the project,
 * names it): the code of its `<% %>` and `<%= %>` tags (not `<%# %>`
 * comments nor `<%%` escapes), in order and one a line, is parsed as the
 * body of `render/1` of the module EEX_MODULE_PREFIX PATH; its calls are the
 * template's. Text between tags is dropped; a code line is at most a few
 * lines off its place in the template. Syntax errors of the joined code
 * (a tag that is not an expression on its own) are dropped, not reported:
 * what parsed is kept. Returns the facts in *out (caller frees with
 * facts_file_free); the errors are ex_parse's. */
int eex_parse(const char *path, const char *text, size_t len, struct facts_file **out);

#endif
