/*
 * Scopes as roctx ranges, for rocprof and Omnitrace. libroctx64 is loaded
 * when forwarding is asked for, so builds need no ROCm; without it the
 * reason is reported and scopes are only recorded. TIMERLOG_ROCTX_LIBRARY
 * names another library to load instead.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forward.h"

typedef struct roctx_api {
    int (*push)(const char *message);
    int (*pop)(void);
} roctx_api;

static roctx_api api;
static char load_error[400];
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

/* The library TIMERLOG_ROCTX_LIBRARY names, and no other: a path that
 * cannot be loaded is said with the loader's reason. */
static void *load_named(const char *path)
{
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        if (why && strstr(why, path))   /* the loader's words name the path */
            snprintf(load_error, sizeof load_error, "TIMERLOG_ROCTX_LIBRARY: %.300s", why);
        else
            snprintf(load_error, sizeof load_error, "TIMERLOG_ROCTX_LIBRARY: %.150s: %.200s",
                     path, why ? why : "could not be loaded");
    }
    return lib;
}

static void load(void)
{
    const char *named = getenv("TIMERLOG_ROCTX_LIBRARY");
    void *lib = NULL;
    if (named && *named) {
        if (!(lib = load_named(named)))
            return;
    } else {
        lib = dlopen("libroctx64.so.4", RTLD_NOW | RTLD_LOCAL);
        if (!lib)
            lib = dlopen("libroctx64.so", RTLD_NOW | RTLD_LOCAL);
    }
    if (!lib) {
        snprintf(load_error, sizeof load_error,
                 "libroctx64 was not found (ROCm's roctracer)");
        return;
    }
    /* POSIX's way to turn a symbol into a function pointer. */
    *(void **)&api.push = dlsym(lib, "roctxRangePushA");
    *(void **)&api.pop = dlsym(lib, "roctxRangePop");
    if (!api.push || !api.pop) {
        api.push = NULL;
        snprintf(load_error, sizeof load_error, "%s lacks roctxRangePushA or roctxRangePop",
                 named && *named ? named : "libroctx64");
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
        tlog_report_setting_(log, TLOG_ENODEVICE,
                     "roctx forwarding was asked for, but %s; scopes are recorded, not "
                     "forwarded", load_error);
        return TLOG_ENODEVICE;
    }
    return tlog_forward_start_(log, "roctx", push, pop);
}
