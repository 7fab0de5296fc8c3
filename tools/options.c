/* Options that take a value (options.h). */
#include "options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char *option_value_wanted(const option_value *table, const char *option)
{
    for (; table->option; table++)
        if (strcmp(table->option, option) == 0)
            return table->value;
    return NULL;
}

void option_problem(const option_value *table, int argc, char **argv, int i, char *msg,
                    size_t size)
{
    const char *wanted = option_value_wanted(table, argv[i]);
    if (!wanted)
        snprintf(msg, size, "unknown option %s", argv[i]);
    else if (i + 1 >= argc)
        snprintf(msg, size, "%s takes %s, and none is given", argv[i], wanted);
    else if (!argv[i + 1][0])
        snprintf(msg, size, "%s takes %s, not an empty string", argv[i], wanted);
    else
        snprintf(msg, size, "%s takes %s, not \"%s\"", argv[i], wanted, argv[i + 1]);
}

void put_synopsis(FILE *out, const char *help)
{
    const char *end = strstr(help, "\n\n");
    fwrite(help, 1, end ? (size_t)(end - help) + 1 : strlen(help), out);
    if (end)
        fputs("(--help gives the whole of it)\n", out);
}

bool one_of(const char *const *set, const char *opt, const char **given)
{
    for (; *set; set++)
        if (strcmp(*set, opt) == 0) {
            if (*given && strcmp(*given, opt) != 0)
                return false;
            *given = *set;
            return true;
        }
    return true;
}

bool digits_arg(const char *s, uint64_t *v, char **end)
{
    if (*s < '0' || *s > '9')
        return false;
    errno = 0;
    *v = strtoull(s, end, 10);
    return errno == 0;
}

bool number_arg(const char *s, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return end != s && !*end && errno == 0 && *v >= 0 && *v < 1e15;
}

bool ms_arg(const char *s, uint64_t *ns)
{
    double ms;
    if (!number_arg(s, &ms))
        return false;
    double rounded = ms * 1e6 + 0.5;
    if (rounded < 1 || rounded >= 18446744073709551616.0)
        return false;
    *ns = (uint64_t)rounded;
    return true;
}

bool is_option(const char *arg)
{
    return arg[0] == '-' && arg[1];
}

bool options_first(int argc, char **argv, const option_value *table)
{
    bool lacking = false;
    char **moved = malloc((size_t)(argc > 0 ? argc : 1) * sizeof *moved);
    if (!moved)
        return false;   /* as given: files after options still read */
    int n = 0;
    for (int i = 0; i < argc; i++) {
        if (!is_option(argv[i]))
            continue;
        bool valued = option_value_wanted(table, argv[i]) != NULL;
        if (valued && i + 1 == argc) {
            lacking = true;   /* moved last, below */
            break;
        }
        moved[n++] = argv[i];
        if (valued)
            moved[n++] = argv[++i];
    }
    for (int i = 0; i < argc - lacking; i++) {
        if (is_option(argv[i])) {
            i += option_value_wanted(table, argv[i]) != NULL;
            continue;
        }
        moved[n++] = argv[i];
    }
    if (lacking)
        moved[n++] = argv[argc - 1];
    memcpy(argv, moved, (size_t)argc * sizeof *argv);
    free(moved);
    return lacking;
}

/* The first of the n files that `path` also names, or NULL. */
static const char *output_input(const char *path, char *const *files, size_t n)
{
    struct stat out, in;
    if (!path || stat(path, &out) != 0)
        return NULL;
    for (size_t k = 0; k < n; k++)
        if (stat(files[k], &in) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino)
            return files[k];
    return NULL;
}

bool output_over_input(const char *path, char *const *files, size_t n, FILE *err)
{
    const char *input = output_input(path, files, n);
    if (input)
        fprintf(err, "timerlog: -o %s names the input %s; write the output elsewhere\n", path,
                input);
    return input != NULL;
}
