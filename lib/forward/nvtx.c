/*
 * Scopes as NVTX ranges, so that Nsight Systems shows them beside the
 * kernels. NVTX 3 is header-only, and loads its tool (NVTX_INJECTION64_PATH)
 * once, at the process's first NVTX call; without one, creating a domain
 * gives NULL, and no tool can come later. Then nothing is subscribed, so
 * forwarding costs the scopes nothing.
 */
#include <nvtx3/nvToolsExt.h>

#include "forward.h"

static nvtxDomainHandle_t domain;
static pthread_once_t domain_once = PTHREAD_ONCE_INIT;

static void make_domain(void)
{
    domain = nvtxDomainCreateA("timerlog");
}

static void push(void *user, const tlog_scope_event *e)
{
    (void)user;
    nvtxEventAttributes_t a = {0};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = e->site->name;
    nvtxDomainRangePushEx(domain, &a);
}

static void pop(void *user, const tlog_scope_event *e)
{
    (void)user;
    (void)e;
    nvtxDomainRangePop(domain);
}

int tlog_nvtx_start_(tlog_log *log)
{
    pthread_once(&domain_once, make_domain);
    if (!domain)
        return TLOG_OK;   /* no tool attached: nothing to tell */
    return tlog_forward_start_(log, "NVTX", push, pop);
}
