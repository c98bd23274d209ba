/*
 * log.h - leveled logging to standard error.
 *
 * One line per message: ISO time, level, component, text. The level comes
 * from GIULIA_LOG (error, warn, info, debug; default info) or gi_log_set_level.
 * Thread-safe: each message is written with one write(2) call.
 * Never log a cookie or a token.
 */
#ifndef GIULIA_BASE_LOG_H
#define GIULIA_BASE_LOG_H

enum gi_log_level { GI_LOG_ERROR, GI_LOG_WARN, GI_LOG_INFO, GI_LOG_DEBUG };

void gi_log_set_level(enum gi_log_level level);
int gi_log_enabled(enum gi_log_level level);
void gi_log(enum gi_log_level level, const char *component, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define gi_log_error(comp, ...) gi_log(GI_LOG_ERROR, comp, __VA_ARGS__)
#define gi_log_warn(comp, ...)  gi_log(GI_LOG_WARN, comp, __VA_ARGS__)
#define gi_log_info(comp, ...)  gi_log(GI_LOG_INFO, comp, __VA_ARGS__)
#define gi_log_debug(comp, ...) gi_log(GI_LOG_DEBUG, comp, __VA_ARGS__)

#endif
