/* A program that uses libtimerlog the way an application does: one frame
 * with a nested scope, printed. Built by each consumer project here. */
#include <timerlog/timerlog.h>

int main(void)
{
    {
        TIMERLOG_SCOPE("Consumer frame");
        TIMERLOG_SCOPE("Work");
    }
    return tlog_dump(NULL, NULL) == TLOG_OK ? 0 : 1;
}
