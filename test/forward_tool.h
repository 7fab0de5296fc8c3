/* What the test tools behind the NVTX and roctx forwarders (nvtx_inject.c,
 * roctx_stub.c) saw, read back by test_forward.c. */
#ifndef TIMERLOG_TEST_FORWARD_TOOL_H
#define TIMERLOG_TEST_FORWARD_TOOL_H

#define FORWARD_MAX_NAMES 64

typedef struct forward_counts {
    int timerlog_domain;      /* NVTX: a domain named "timerlog" was made */
    long pushes, pops;        /* ranges in that domain (roctx: all ranges) */
    long other_domain_calls;  /* NVTX: pushes or pops in other domains */
    long unbalanced_pops;     /* a pop on a thread with nothing pushed */
    long max_depth;
    long not_text;            /* NVTX: messages that are not ASCII */
    int names;                /* the first pushed messages, in order */
    char name[FORWARD_MAX_NAMES][32];
} forward_counts;

/* Exported by each tool library. */
typedef void (*forward_report_fn)(forward_counts *out);
#define FORWARD_REPORT_SYMBOL "forward_tool_report"

#endif
