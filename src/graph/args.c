/*
 * args.c - the named arguments of a kg_query (see args.h).
 */
#include "graph/args.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "base/str.h"

static _Thread_local char query_error[512];
static _Thread_local bool query_error_set;

void kg_query_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(query_error, sizeof(query_error), fmt, ap);
	va_end(ap);
	query_error_set = true;
}

void kg_query_fail_reset(void)
{
	query_error_set = false;
}

const char *kg_query_error_message(void)
{
	return query_error_set ? query_error : NULL;
}

const json_t *kg_arg(const struct kg_query_params *p, const char *name)
{
	return p && p->args ? json_object_get(p->args, name) : NULL;
}

const char *kg_arg_string(const struct kg_query_params *p, const char *name)
{
	return json_string_value(kg_arg(p, name));
}

int kg_arg_int(const struct kg_query_params *p, const char *name, int dflt, int min, int max,
               int *out)
{
	const json_t *v = kg_arg(p, name);
	*out = dflt;
	if (!v || json_is_null(v))
		return 0;
	int64_t n = 0;
	if (json_is_integer(v))
		n = json_integer_value(v);
	else if (!json_string_value(v) ||
	         gi_parse_int64(json_string_value(v), INT64_MIN, INT64_MAX, &n)) {
		kg_query_fail("%s must be an integer", name);
		return GI_EINVAL;
	}
	if (n < min || n > max) {
		kg_query_fail("%s must be between %d and %d", name, min, max);
		return GI_EINVAL;
	}
	*out = (int)n;
	return 0;
}

int kg_arg_bool(const struct kg_query_params *p, const char *name, bool *out)
{
	const json_t *v = kg_arg(p, name);
	*out = false;
	if (!v || json_is_null(v))
		return 0;
	if (json_is_boolean(v)) {
		*out = json_is_true(v);
		return 0;
	}
	const char *s = json_string_value(v);
	if (s && (strcmp(s, "true") == 0 || strcmp(s, "1") == 0)) {
		*out = true;
		return 0;
	}
	if (s && (strcmp(s, "false") == 0 || strcmp(s, "0") == 0 || !*s))
		return 0;
	kg_query_fail("%s must be true or false", name);
	return GI_EINVAL;
}

bool kg_module_within(const char *name, const char *prefix)
{
	if (!prefix || !*prefix)
		return true;
	if (gi_str_starts_with(prefix, "Elixir.") && prefix[7])
		prefix += 7;
	size_t n = strlen(prefix);
	return strncmp(name, prefix, n) == 0 && (name[n] == '\0' || name[n] == '.');
}
