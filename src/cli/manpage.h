/* Man pages and shell completion, generated from the command tables and the
 * option tables at build time (hidden: `gpuqual --man [CMD]`,
 * `gpuqual --completion bash|zsh`), so they cannot drift from --help. */
#ifndef GQ_CLI_MANPAGE_H
#define GQ_CLI_MANPAGE_H

#include <stdio.h>

/* gpuqual(1) when cmd is NULL, else gpuqual-CMD(1), in roff (man(7)).
 * Returns 0, or 2 for an unknown command. */
int gq_cli_man(FILE *f, const char *cmd);

/* The completion script for shell "bash" or "zsh". Returns 0, or 2 for
 * another shell. */
int gq_cli_completion(FILE *f, const char *shell);

#endif
