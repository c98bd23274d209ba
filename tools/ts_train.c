/*
 * ts_train.c - build-time tool: the training run of the profile-guided build
 * of the tree-sitter runtime and the Elixir grammar (Makefile, "The parser,
 * optimised from a profile"). Linked with their instrumented objects, it
 * parses each file given and walks every node of its tree with a cursor, as
 * the index does, so that the counters the compiler reads back describe the
 * index's parse: the lexer's states, the parse table, the stack, the cursor,
 * and the runtime's memory from a per-parse arena (src/source/elixir_arena.c,
 * linked in) as ex_parse sets it up.
 *
 *   ts_train FILE...
 *
 * Single-threaded and deterministic: the same files give the same profile,
 * so the build stays reproducible. A file that cannot be read is an error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <tree_sitter/api.h>

#include "source/elixir_int.h"

const TSLanguage *tree_sitter_elixir(void);

/* The largest file read; bigger ones are cut (a training corpus, not input). */
#define TRAIN_MAX_FILE ((size_t)4 << 20)

static char *read_file(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return NULL;
	char *buf = malloc(TRAIN_MAX_FILE);
	if (buf)
		*len = fread(buf, 1, TRAIN_MAX_FILE, fp);
	fclose(fp);
	return buf;
}

/* Visits every node in document order, as the extraction's walk does; the
 * cursor and the tree go with the parse's arena. */
static unsigned long walk(TSTree *tree)
{
	unsigned long nodes = 0;
	TSTreeCursor cur = ts_tree_cursor_new(ts_tree_root_node(tree));
	for (;;) {
		TSNode n = ts_tree_cursor_current_node(&cur);
		nodes += ts_node_is_named(n) + (ts_tree_cursor_current_field_id(&cur) != 0);
		if (ts_tree_cursor_goto_first_child(&cur))
			continue;
		while (!ts_tree_cursor_goto_next_sibling(&cur))
			if (!ts_tree_cursor_goto_parent(&cur))
				goto done;
	}
done:
	return nodes;
}

int main(int argc, char **argv)
{
	unsigned long nodes = 0;
	ex_arena_install();
	for (int i = 1; i < argc; i++) {
		size_t len = 0;
		char *src = read_file(argv[i], &len);
		if (!src) {
			fprintf(stderr, "ts_train: cannot read %s\n", argv[i]);
			return 1;
		}
		struct ex_arena *arena = ex_arena_begin(len);
		TSParser *parser = ts_parser_new();
		ts_parser_set_language(parser, tree_sitter_elixir());
		TSTree *tree = ts_parser_parse_string(parser, NULL, src, (uint32_t)len);
		if (tree)
			nodes += walk(tree);
		ex_arena_end(arena);
		free(src);
	}
	printf("ts_train: %d files, %lu named nodes and fields\n", argc - 1, nodes);
	return 0;
}
