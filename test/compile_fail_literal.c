/* Cases for compile_fail.py: case 0 compiles; case 1 gives TIMERLOG_SCOPE a
 * name that is not a string literal, which must fail with a message that
 * names TIMERLOG_SCOPE_NAMED (C shows it on the initializer's line). */
#include <timerlog/timerlog.h>

void scopes(const char *name);
void scopes(const char *name)
{
#if TLOG_CASE == 0
    TIMERLOG_SCOPE("literal");
    TIMERLOG_SCOPE(__func__);
    TIMERLOG_SCOPE_NAMED(name);
#elif TLOG_CASE == 1
    TIMERLOG_SCOPE(name);
#endif
}
