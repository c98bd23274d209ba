/*
 * clock.h - time sources. Thread-safe.
 */
#ifndef GIULIA_BASE_CLOCK_H
#define GIULIA_BASE_CLOCK_H

#include <stdint.h>

/* Milliseconds on a monotonic clock, for deadlines and durations. */
int64_t gi_clock_mono_ms(void);
/* Microseconds on a monotonic clock, for measurements. */
int64_t gi_clock_mono_us(void);
/* Milliseconds since the Unix epoch, for timestamps shown to people. */
int64_t gi_clock_wall_ms(void);
/* Sleeps for `ms` milliseconds (restarting after signals). */
void gi_clock_sleep_ms(int64_t ms);

#endif
