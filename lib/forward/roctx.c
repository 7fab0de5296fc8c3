/*
 * Scopes as roctx ranges, for rocprof and Omnitrace. libroctx64 is loaded
 * when forwarding is asked for, so builds need no ROCm; without it the
 * reason is reported and scopes are only recorded. TIMERLOG_ROCTX_LIBRARY
 * names another library to load instead.
 */
#include <dlfcn.h>
#include <stdlib.h>

#include "forward.h"

typedef struct roctx_api {
    int (*push)(const char *message);
    int (*pop)(void);
} roctx_api;

static roctx_api api;
static const char *load_error;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load(void)
{
    const char *names[] = {getenv("TIMERLOG_ROCTX_LIBRARY"), "libroctx64.so.4",
                           "libroctx64.so"};
    void *lib = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !lib; i++)
        if (names[i] && names[i][0])
            lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        load_error = "libroctx64 was not found (ROCm's roctracer)";
        return;
    }
    /* POSIX's way to turn a symbol into a function pointer. */
    *(void **)&api.push = dlsym(lib, "roctxRangePushA");
    *(void **)&api.pop = dlsym(lib, "roctxRangePop");
    if (!api.push || !api.pop) {
        api.push = NULL;
        load_error = "libroctx64 lacks roctxRangePushA or roctxRangePop";
    }
}

static void push(void *user, const tlog_scope_event *e)
{
    (void)user;
    api.push(e->site->name);
}

static void pop(void *user, const tlog_scope_event *e)
{
    (void)user;
    (void)e;
    api.pop();
}

int tlog_roctx_start_(tlog_log *log)
{
    pthread_once(&load_once, load);
    if (!api.push) {
        tlog_report_(log, NULL, TLOG_ENODEVICE, NULL,
                     "roctx forwarding was asked for, but %s; scopes are recorded, not "
                     "forwarded", load_error);
        return TLOG_ENODEVICE;
    }
    return tlog_forward_start_(log, "roctx", push, pop);
}
