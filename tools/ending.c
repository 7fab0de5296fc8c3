/* The end of a stream as the commands that read one say it (ending.h). */
#include "ending.h"

#include <inttypes.h>

bool warn_at_end(tlog_reader *r, const char *path, int rc, FILE *err)
{
    if (rc != TLOG_ENOFRAME)
        return false;
    tlog_reader_info info = {.size = sizeof info};
    tlog_reader_get_info(r, &info);
    if (!info.ended) {   /* cut short: its frames are still whole */
        fprintf(err, "timerlog: %s: warning: %s\n", path, tlog_reader_error(r));
        return true;
    }
    if (info.frames_lost)
        fprintf(err, "timerlog: %s: warning: %" PRIu64 " frame%s the writer could not "
                "write %s missing\n", path, info.frames_lost, info.frames_lost == 1 ? "" : "s",
                info.frames_lost == 1 ? "is" : "are");
    if (info.end_frames != info.frames)
        fprintf(err, "timerlog: %s: warning: the end block counts %" PRIu64 " frames "
                "written, and %" PRIu64 " were read\n", path, info.end_frames, info.frames);
    return true;
}
