/*
 * headless.h - a page in a real headless Chromium at a given window size,
 * for the tests of the HTML report: what the DOM is once its scripts ran.
 */
#ifndef GIULIA_TESTS_HEADLESS_H
#define GIULIA_TESTS_HEADLESS_H

/* The Chromium binary, or NULL when there is none. */
const char *ts_chromium_path(void);
/* Loads `url` in headless Chromium with a window of `width` x `height` px
 * and returns the DOM after its scripts ran (--dump-dom; caller frees).
 * Fails the test when Chromium fails. Headless windows are at least 500 px
 * wide: see ts_chromium_frame for narrower viewports. */
char *ts_chromium_dom(const char *url, int width, int height);
/* Loads the local file `path` in an iframe of `width` x `height` px (any
 * width, as a phone's viewport) and returns the attributes its <body> has
 * once its scripts ran, as `<body ...>` text copied into the outer page
 * (caller frees). */
char *ts_chromium_frame(const char *path, int width, int height);

#endif
