/*
 * fmt.h - numbers and names as every text output writes them (CLI tables,
 * text and HTML reports, recommendations), so that a value reads the same
 * wherever it appears. JSON output never goes through here: it stays raw.
 *
 *   bytes   512 B, 11.1 KiB, 2.7 MiB, 1.20 GiB   (binary units)
 *   counts  7674, 12.3k, 26.4M, 1.27G
 *   rates   a count with /s: 126.9M/s
 *   shares  12.5%
 *   names   Elixir modules without "Elixir.", Erlang ones with ':';
 *           anonymous funs as "fn in Mod.fun/1"
 *
 * Pure functions writing into caller buffers (always NUL-terminated, cut
 * when too small): thread-safe.
 */
#ifndef GIULIA_BASE_FMT_H
#define GIULIA_BASE_FMT_H

#include <stddef.h>

/* Sizes written by the formatters fit in this many bytes. */
#define GI_FMT_NUM_MAX 32

void gi_fmt_bytes(double bytes, char *out, size_t size);
void gi_fmt_count(double n, char *out, size_t size);
void gi_fmt_rate(double per_second, char *out, size_t size);
void gi_fmt_share(double share, char *out, size_t size);

/* A registered name or module atom as Giulia writes module names:
 * "Elixir.Demo.Hog" -> "Demo.Hog"; an Erlang atom ("logger") stays as it is
 * (registered names are not modules: no ':' is added). */
void gi_fmt_registered_name(const char *atom, char *out, size_t size);

/* A function for people: `module` (display form), `name`, `arity`. The
 * compiler's names of anonymous funs and comprehensions ("-to_maps/1-fun-0-",
 * "-handle/2-lc$^0/1-0-") become "fn in Mod.to_maps/1"; others
 * "Mod.name/arity". `module` may be NULL (then no "Mod."). */
void gi_fmt_function(const char *module, const char *name, long long arity, char *out, size_t size);
/* The same for a whole "Mod.name/arity" string (as snapshots carry it):
 * "Nexus.Repo.-to_maps/1-fun-0-/2" -> "fn in Nexus.Repo.to_maps/1"; any
 * other string is copied. */
void gi_fmt_mfa(const char *mfa, char *out, size_t size);
/* True when `name` is a compiler-generated name of an anonymous fun. */
int gi_fmt_is_anonymous(const char *name);

/* The display width of UTF-8 `s` (code points; no wide characters). */
size_t gi_fmt_width(const char *s);
/* `s` cut to at most `width` columns by eliding its middle with "…", so that
 * both the start and the end (the function's name) stay: writes `out`. */
void gi_fmt_elide_middle(const char *s, size_t width, char *out, size_t size);

#endif
