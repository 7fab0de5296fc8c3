#version 450
// Spins until the device's real-time clock has advanced by `ns`, then
// writes how long it spun to self_ns[slot]: work of a known length.
//
// Each pass of the loop does a chain of xorshift steps that the compiler
// cannot fold: llvmpipe ends a shader's loop after 65535 passes, so passes
// must be long enough (about 2 us there) for the spins the tests ask of one
// dispatch (up to 50 ms). The result feeds a store nobody reads, so that the
// chain is kept.
#extension GL_EXT_shader_realtime_clock : require
#extension GL_ARB_gpu_shader_int64 : require

layout(local_size_x = 1) in;
layout(push_constant) uniform Args { uint64_t ns; uint slot; } args;
layout(std430, binding = 0) buffer Out { uint64_t words[]; } o;

#define STEP x ^= x << 13; x ^= x >> 17; x ^= x << 5;
#define STEP8 STEP STEP STEP STEP STEP STEP STEP STEP
#define STEP64 STEP8 STEP8 STEP8 STEP8 STEP8 STEP8 STEP8 STEP8
#define STEP256 STEP64 STEP64 STEP64 STEP64

// Time is summed from the clock's low 32 bits alone: llvmpipe reads the two
// halves of its 64-bit clock apart, so the whole value steps back by 2^32 ns
// when the low half wraps between them (every 4.3 s), which would end a spin
// that straddles it early.
void main()
{
    uint prev = clockRealtime2x32EXT().x;
    uint64_t spun = 0ul;
    uint x = args.slot + 1u;
    while (spun < args.ns) {
        STEP256 STEP256 STEP256 STEP256
        uint now = clockRealtime2x32EXT().x;
        spun += uint64_t(now - prev);
        prev = now;
    }
    o.words[args.slot] = spun;
    if (x == 0u)
        o.words[args.slot + 512u] = uint64_t(x);
}
