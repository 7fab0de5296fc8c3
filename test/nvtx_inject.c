/*
 * A test NVTX tool: what NVTX_INJECTION64_PATH loads in place of Nsight
 * Systems. It takes over the NVTX domain calls and counts what arrives, per
 * domain and per thread; tests read it back through forward_tool_report.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <nvtx3/nvToolsExt.h>

#include "forward_tool.h"

#define MAX_DOMAINS 8

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static forward_counts counts;
static int domains;
static char domain_names[MAX_DOMAINS][32];
static _Thread_local long depth;

static int is_timerlog(nvtxDomainHandle_t d)
{
    int i = (int)(intptr_t)d - 1;
    return i >= 0 && i < domains && strcmp(domain_names[i], "timerlog") == 0;
}

static nvtxDomainHandle_t create_domain(const char *name)
{
    pthread_mutex_lock(&lock);
    int i = domains < MAX_DOMAINS ? domains++ : MAX_DOMAINS - 1;
    snprintf(domain_names[i], sizeof domain_names[i], "%s", name);
    if (strcmp(name, "timerlog") == 0)
        counts.timerlog_domain = 1;
    pthread_mutex_unlock(&lock);
    return (nvtxDomainHandle_t)(intptr_t)(i + 1);
}

static int push(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    pthread_mutex_lock(&lock);
    if (!is_timerlog(d)) {
        counts.other_domain_calls++;
    } else {
        counts.pushes++;
        if (++depth > counts.max_depth)
            counts.max_depth = depth;
        if (a->messageType != NVTX_MESSAGE_TYPE_ASCII)
            counts.not_text++;
        else if (counts.names < FORWARD_MAX_NAMES)
            snprintf(counts.name[counts.names++], sizeof counts.name[0], "%s",
                     a->message.ascii);
    }
    pthread_mutex_unlock(&lock);
    return 0;
}

static int pop(nvtxDomainHandle_t d)
{
    pthread_mutex_lock(&lock);
    if (!is_timerlog(d)) {
        counts.other_domain_calls++;
    } else {
        counts.pops++;
        if (depth == 0)
            counts.unbalanced_pops++;
        else
            depth--;
    }
    pthread_mutex_unlock(&lock);
    return 0;
}

static void set(NvtxFunctionTable table, unsigned size, unsigned id, NvtxFunctionPointer f)
{
    if (id < size && table[id])
        *table[id] = f;
}

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
    const NvtxExportTableCallbacks *cb = get(NVTX_ETID_CALLBACKS);
    NvtxFunctionTable table = NULL;
    unsigned size = 0;
    if (!cb || !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size) || !table)
        return 0;
    set(table, size, NVTX_CBID_CORE2_DomainCreateA, (NvtxFunctionPointer)create_domain);
    set(table, size, NVTX_CBID_CORE2_DomainRangePushEx, (NvtxFunctionPointer)push);
    set(table, size, NVTX_CBID_CORE2_DomainRangePop, (NvtxFunctionPointer)pop);
    return 1;
}

__attribute__((visibility("default"))) void forward_tool_report(forward_counts *out)
{
    pthread_mutex_lock(&lock);
    *out = counts;
    pthread_mutex_unlock(&lock);
}
