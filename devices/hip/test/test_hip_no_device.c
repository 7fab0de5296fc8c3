/*
 * The HIP backend without a device, against the real HIP runtime
 * (libamdhip64): where it finds no GPU, creating a device reports why and
 * fails cleanly, and HIP scopes only count themselves. Skips (77) where a
 * GPU is present.
 */
#include <stdio.h>
#include <string.h>

#include <timerlog/hip.h>

#include "check.h"

/* Reports come while the default device is being created: a callback that
 * uses the backend then gets no device rather than waiting for itself. */
static void reenter(void *user, const tlog_error *e)
{
    check_collect(user, e);
    CHECK(tlog_hip_device(NULL) == NULL);
}

int main(void)
{
    int n = 0;
    if (hipGetDeviceCount(&n) == hipSuccess && n > 0) {
        puts("a GPU is present: the no-device path is not tested here");
        return SKIP;
    }
    check_errors errs = {0};
    tlog_config cfg = {.size = sizeof cfg, .on_error = reenter, .error_user = &errs};
    CHECK(tlog_default_config(&cfg) == TLOG_OK);

    tlog_device *dev = (tlog_device *)&errs;
    CHECK(tlog_hip_device_create(NULL, 0, NULL, &dev) == TLOG_ENODEVICE);
    CHECK(dev == NULL);
    /* Twice: the callback's own call tried the default device too. */
    CHECK(errs.count == 2 && errs.last_code == TLOG_ENODEVICE);
    CHECK(strstr(errs.last, "HIP: no usable device") != NULL);

    for (int frame = 0; frame < 3; frame++) {
        TIMERLOG_SCOPE("Frame");
        for (int k = 0; k < 10; k++) {
            TIMERLOG_HIP_SCOPE(NULL, "Kernel");
        }
        TIMERLOG_HIP_SYNC_SCOPE("Sync");
    }
    CHECK(tlog_hip_scopes_untimed() == 30);
    CHECK(tlog_hip_device(NULL) == NULL);
    CHECK(tlog_hip_configure(NULL) == TLOG_EBUSY);
    CHECK(tlog_frame_ready(NULL) == 1);
    FILE *sink = tmpfile();
    CHECK(tlog_dump(NULL, sink) == TLOG_OK);
    fclose(sink);
    printf("no device: %s; 30 scopes untimed, frames unaffected\n", errs.last);
    return check_failures ? 1 : 0;
}
