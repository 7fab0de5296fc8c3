#version 450
// Work of a known relative cost: `rounds` passes of 768 dependent xorshift
// operations, in one invocation. Twice the rounds is twice the work. The
// result goes to words[2 * (512 + slot)] so that the compiler keeps the
// chain. At most 65535 rounds (llvmpipe ends a loop there).

layout(local_size_x = 1) in;
layout(push_constant) uniform Args { uint rounds; uint slot; } args;
layout(std430, binding = 0) buffer Out { uint words[]; } o;

#define STEP x ^= x << 13; x ^= x >> 17; x ^= x << 5;
#define STEP8 STEP STEP STEP STEP STEP STEP STEP STEP
#define STEP64 STEP8 STEP8 STEP8 STEP8 STEP8 STEP8 STEP8 STEP8

void main()
{
    uint x = args.slot + 1u;
    for (uint i = 0u; i < args.rounds; i++) {
        STEP64 STEP64 STEP64 STEP64
    }
    o.words[2u * (512u + args.slot)] = x;
}
