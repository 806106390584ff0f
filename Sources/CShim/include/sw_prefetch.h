#ifndef SWIFTWING_SW_PREFETCH_H
#define SWIFTWING_SW_PREFETCH_H
// A cache hint Swift has no spelling for (x86-64 prefetcht0, arm64 prfm pldl1keep). Never faults,
// so addresses past the end of a buffer are harmless.
static inline void sw_prefetch(const void *address) { __builtin_prefetch(address, 0, 3); }
#endif
