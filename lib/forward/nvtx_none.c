/* NVTX forwarding in a build made without the NVTX 3 headers. */
#include "forward.h"

int tlog_nvtx_start_(tlog_log *log)
{
    tlog_report_setting_(log, TLOG_ENODEVICE,
                 "NVTX forwarding was asked for, but this libtimerlog was built "
                 "without NVTX (the NVTX 3 headers of the CUDA toolkit were not "
                 "found); scopes are recorded, not forwarded");
    return TLOG_ENODEVICE;
}
