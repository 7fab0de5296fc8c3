/*
 * libFuzzer target: the timerlog command's argument handling, run as a
 * function (timerlog_main) over and over in one process. Any crash,
 * sanitizer report or leak is a bug; bad arguments must only ever give a
 * message and exit status 2.
 *
 * Input: the arguments after the program's name, each ended by a NUL
 * byte. The fuzzer never names a file itself: every argument the command
 * would open becomes one of the fixed files below, picked by its first
 * character ('0' the first, '1' the next, ...), and the value of -o one of
 * the fixed outputs. Which arguments those are follows the command's rules:
 * the value of report's --base, and every argument from the first that is
 * neither an option nor an option's value, except the --vs that parts the
 * runs of `diff`. A "-" among them reads standard input, which is empty.
 * Results and messages go to a stream that discards them.
 *
 *   build-fuzz/fuzz/fuzz_cli NEW_CORPUS_DIR fuzz/corpus_cli
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "sink.h"

#define MAX_ARGS 16

/* The run's directory: a directory to name, and where an output goes. */
static char dir[64];
static char files[8][600], outputs[5][600];

static void remove_dir(void)
{
    char p[600];
    snprintf(p, sizeof p, "%s/out", dir);
    unlink(p);
    rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    snprintf(dir, sizeof dir, "/tmp/timerlog-fuzz-cli-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("fuzz_cli: mkdtemp");
        exit(1);
    }
    atexit(remove_dir);
    /* A "-" reads standard input: empty, never a terminal to wait on. */
    if (!freopen("/dev/null", "r", stdin)) {
        perror("fuzz_cli: /dev/null");
        exit(1);
    }
    static const char *const seeds[] = {"host.tlog", "device.tlog", "device_pair.tlog",
                                        "empty.tlog", "regress-deep.tlog"};
    for (size_t k = 0; k < sizeof seeds / sizeof *seeds; k++)
        snprintf(files[k], sizeof files[k], "%s/%s", FUZZ_CORPUS, seeds[k]);
    snprintf(files[5], sizeof files[5], "/dev/null");
    snprintf(files[6], sizeof files[6], "%s", dir);
    snprintf(files[7], sizeof files[7], "%s/missing.tlog", dir);
    snprintf(outputs[0], sizeof outputs[0], "/dev/null");
    snprintf(outputs[1], sizeof outputs[1], "%s/out", dir);
    snprintf(outputs[2], sizeof outputs[2], "/dev/full");
    snprintf(outputs[3], sizeof outputs[3], "%s/missing/out", dir);
    snprintf(outputs[4], sizeof outputs[4], "%s", dir);
    return 0;
}

/* The fixed path that argument `arg` stands for. */
static char *pick(char (*paths)[600], size_t n, const char *arg)
{
    return paths[(unsigned char)(arg[0] - '0') % n];
}

/* Whether the command reads the argument after `option` as its value. */
static int takes_value(const char *option)
{
    static const char *const with_value[] = {"--frame", "--frames", "--thread", "--root",
                                             "--min-percent", "-o", "--hitch",
                                             "--hitch-quantile", "--max-hitches", "--threshold",
                                             "--alpha", "--resamples", "--seed",
                                             "--base", "--samples"};
    for (size_t k = 0; k < sizeof with_value / sizeof *with_value; k++)
        if (strcmp(option, with_value[k]) == 0)
            return 1;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *sink = fuzz_sink();
    if (!sink)
        return 0;
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    if (size)
        memcpy(text, data, size);
    text[size] = '\0';
    static char name[] = "timerlog";
    char *argv[MAX_ARGS + 2] = {name};
    int argc = 1;
    for (size_t at = 0; at < size && argc <= MAX_ARGS; at += strlen(text + at) + 1)
        argv[argc++] = text + at;
    /* Past the command and its options: the files. */
    int first_file = 2;
    while (argc > 1 && first_file < argc && argv[first_file][0] == '-') {
        const char *option = argv[first_file++];
        if (!takes_value(option) || first_file == argc)
            continue;
        if (strcmp(option, "-o") == 0 && argv[first_file][0])
            argv[first_file] = pick(outputs, sizeof outputs / sizeof *outputs,
                                    argv[first_file]);
        else if (strcmp(option, "--base") == 0)   /* report's base run: a file */
            argv[first_file] = pick(files, sizeof files / sizeof *files, argv[first_file]);
        first_file++;
    }
    for (int i = first_file; i < argc; i++)
        if (strcmp(argv[1], "diff") != 0 || strcmp(argv[i], "--vs") != 0)
            argv[i] = pick(files, sizeof files / sizeof *files, argv[i]);
    argv[argc] = NULL;
    timerlog_main(argc, argv, sink, sink);
    free(text);
    return 0;
}
