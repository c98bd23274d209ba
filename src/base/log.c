/*
 * log.c - leveled logging (see log.h).
 */
#include "base/log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static atomic_int log_level = -1;

static int level_from_env(void)
{
	const char *env = getenv("GIULIA_LOG");
	if (!env)
		return GI_LOG_INFO;
	if (strcmp(env, "error") == 0)
		return GI_LOG_ERROR;
	if (strcmp(env, "warn") == 0)
		return GI_LOG_WARN;
	if (strcmp(env, "debug") == 0)
		return GI_LOG_DEBUG;
	return GI_LOG_INFO;
}

void gi_log_set_level(enum gi_log_level level)
{
	atomic_store(&log_level, (int)level);
}

int gi_log_enabled(enum gi_log_level level)
{
	int current = atomic_load(&log_level);
	if (current < 0) {
		current = level_from_env();
		atomic_store(&log_level, current);
	}
	return (int)level <= current;
}

void gi_log(enum gi_log_level level, const char *component, const char *fmt, ...)
{
	static const char *names[] = {"error", "warn", "info", "debug"};
	if (!gi_log_enabled(level))
		return;
	char line[2048];
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	int n = snprintf(line, sizeof(line),
	                 "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %-5s %s: ", tm.tm_year + 1900,
	                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
	                 ts.tv_nsec / 1000000, names[level], component);
	if (n < 0 || (size_t)n >= sizeof(line))
		return;
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		return;
	size_t len = (size_t)n + (size_t)m;
	if (len > sizeof(line) - 2)
		len = sizeof(line) - 2;
	line[len++] = '\n';
	ssize_t w = write(STDERR_FILENO, line, len);
	(void)w;
}
