/* Options that take a value, shared by the command's subcommands. */
#ifndef TIMERLOG_TOOLS_OPTIONS_H
#define TIMERLOG_TOOLS_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* An option and what its value must be, in words; a table ends with
 * {NULL, NULL}. */
typedef struct option_value {
    const char *option, *value;
} option_value;

/* What the value of `option` is in `table`; NULL when it takes none. */
const char *option_value_wanted(const option_value *table, const char *option);

/* Says in `msg` what is wrong with argv[i]: an unknown option, or a valued
 * one whose value is missing, empty or bad. */
void option_problem(const option_value *table, int argc, char **argv, int i, char *msg,
                    size_t size);

/* Whether arg is an option: it starts with '-' and is not "-" alone, which
 * names standard input. */
bool is_option(const char *arg);

/* Moves the options of argv, each with its value where `table` says it
 * takes one, before the other arguments, each kind in the order given:
 * options may come after the files (`FILE... -o OUT`). "-" alone is not an
 * option. The last argument, an option that wants a value it lacks, stays
 * last, where it takes no file for its value: true then, for the caller to
 * name it (option_problem). */
bool options_first(int argc, char **argv, const option_value *table);

/* Whether -o `path` names one of the n files read, however either is
 * spelt (the same device and inode): writing there would destroy a file
 * being read. If so, says so on `err`, for the caller to stop as for a
 * usage error. A path that names no file yet is none of them. */
bool output_over_input(const char *path, char *const *files, size_t n, FILE *err);

/* After a usage error: the usage lines of a command's help (up to its first
 * blank line) and where the rest is, so that the one-line problem above
 * them is not buried under the whole help. */
void put_synopsis(FILE *out, const char *help);

/* Options of which one may be given (an output format): whether `opt`, if
 * one of `set` (NULL-ended), agrees with `*given`, the one given before,
 * if any; then it is the one given. False for a second, different one:
 * the caller says both, rather than let the last win unsaid. */
bool one_of(const char *const *set, const char *opt, const char **given);

/* A whole number of digits at the start of s (no sign, no space: strtoull
 * would take both, and wrap a negative) within uint64; *end after it. */
bool digits_arg(const char *s, uint64_t *v, char **end);

/* A number that is the whole of its argument, at least 0 and below 1e15. */
bool number_arg(const char *s, double *v);

/* A duration in milliseconds as whole nanoseconds: a number_arg of at
 * least one nanosecond, and no more than a uint64 of them holds. */
bool ms_arg(const char *s, uint64_t *ns);

#endif
