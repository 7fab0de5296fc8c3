/* What the C and C++ halves of test_mixed call in each other. */
#ifndef TIMERLOG_TEST_MIXED_H
#define TIMERLOG_TEST_MIXED_H

#ifdef __cplusplus
extern "C" {
#endif

void mixed_c_step(int n);        /* C: a scope calling mixed_cpp_kernel n times */
void mixed_c_explicit(void);     /* C: an explicit BEGIN/END pair */
void mixed_cpp_kernel(void);     /* C++: a scope */

#ifdef __cplusplus
}
#endif

#endif
