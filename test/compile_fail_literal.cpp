// Cases for compile_fail.py: case 0 compiles; each other case gives a
// literal-name macro a name that is not a string literal, which must fail
// with a message that names TIMERLOG_SCOPE_NAMED.
#include <string>

#include <timerlog/timerlog.h>

void scopes(const char *name, const std::string &s);
void scopes(const char *name, const std::string &s)
{
#if TLOG_CASE == 0
    TIMERLOG_SCOPE("literal");
    TIMERLOG_SCOPE(__func__);
    TIMERLOG_SCOPE_NAMED(name);
    TIMERLOG_SCOPE_NAMED(s);
#elif TLOG_CASE == 1
    TIMERLOG_SCOPE(name);
#elif TLOG_CASE == 2
    TIMERLOG_SCOPE(s.c_str());
#elif TLOG_CASE == 3
    char buf[16] = "on the stack";
    TIMERLOG_SCOPE_L(TLOG_LEVEL_FINE, buf);
#elif TLOG_CASE == 4
    TIMERLOG_BEGIN(s);
#elif TLOG_CASE == 5
    TIMERLOG_SYNC_SCOPE(nullptr, name);
#endif
}
