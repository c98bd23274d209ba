/*
 * json_read.c - tolerant JSON readers (see json_read.h).
 */
#include "base/json_read.h"

#include <math.h>
#include <string.h>

const json_t *gi_json_get(const json_t *obj, const char *key)
{
	return json_is_object(obj) ? json_object_get(obj, key) : NULL;
}

json_t *gi_json_get_path(const json_t *obj, const char *path)
{
	char key[128];
	const json_t *cur = obj;
	const char *p = path;
	while (cur && *p) {
		const char *dot = strchr(p, '.');
		size_t len = dot ? (size_t)(dot - p) : strlen(p);
		if (len >= sizeof(key) || !json_is_object(cur))
			return NULL;
		memcpy(key, p, len);
		key[len] = '\0';
		cur = json_object_get(cur, key);
		p += len + (dot ? 1 : 0);
	}
	return (json_t *)cur;
}

double gi_json_num(const json_t *obj, const char *key)
{
	const json_t *v = gi_json_get(obj, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

double gi_json_num_path(const json_t *obj, const char *path)
{
	const json_t *v = gi_json_get_path(obj, path);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

double gi_json_num_or(const json_t *obj, const char *key, double dflt)
{
	const json_t *v = gi_json_get(obj, key);
	return json_is_number(v) ? json_number_value(v) : dflt;
}

const char *gi_json_str(const json_t *obj, const char *key)
{
	return json_string_value(gi_json_get(obj, key));
}

const char *gi_json_str_path(const json_t *obj, const char *path)
{
	return json_string_value(gi_json_get_path(obj, path));
}

const json_t *gi_json_obj(const json_t *obj, const char *key)
{
	const json_t *v = gi_json_get(obj, key);
	return json_is_object(v) ? v : NULL;
}

const json_t *gi_json_arr(const json_t *obj, const char *key)
{
	const json_t *v = gi_json_get(obj, key);
	return json_is_array(v) ? v : NULL;
}

bool gi_json_true(const json_t *obj, const char *key)
{
	return json_is_true(gi_json_get(obj, key));
}
