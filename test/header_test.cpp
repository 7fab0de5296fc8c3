/* The public header compiles on its own, first and alone. */
#include <timerlog/timerlog.h>

int main(void)
{
    return tlog_strerror(TLOG_OK) && tlog_err_name(TLOG_OK) ? 0 : 1;
}
