/*
 * clock.c - time sources (see clock.h).
 */
#include "base/clock.h"

#include <errno.h>
#include <time.h>

int64_t gi_clock_mono_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t gi_clock_mono_ms(void)
{
	return gi_clock_mono_us() / 1000;
}

int64_t gi_clock_wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void gi_clock_sleep_ms(int64_t ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}
