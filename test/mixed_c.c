/* The C half of test_mixed: scopes from a C translation unit, calling back
 * into C++, all in the frame the C++ side opened. */
#include <timerlog/timerlog.h>

#include "mixed.h"

void mixed_c_step(int n)
{
    TIMERLOG_SCOPE("C step");
    for (int i = 0; i < n; i++)
        mixed_cpp_kernel();
}

void mixed_c_explicit(void)
{
    TIMERLOG_BEGIN("C explicit");
    TIMERLOG_END("C explicit");
}
