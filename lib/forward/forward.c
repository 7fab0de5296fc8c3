/* What the built-in forwarders share. */
#include "forward.h"

int tlog_forward_start_(tlog_log *log, const char *tool,
                        void (*begin)(void *, const tlog_scope_event *),
                        void (*end)(void *, const tlog_scope_event *))
{
    tlog_subscriber s = {.size = sizeof s, .scope_begin = begin, .scope_end = end};
    tlog_subscription *sub;   /* freed with the log */
    int rc = tlog_subscribe(log, &s, &sub);
    if (rc != TLOG_OK)
        tlog_report_(log, NULL, rc, NULL, "%s forwarding could not start: %s", tool,
                     tlog_strerror(rc));
    return rc;
}
