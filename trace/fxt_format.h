// The numbers of the Fuchsia trace format (FXT) that moontrace writes and
// reads: record, event, argument and kernel object types.
#pragma once
#include <cstddef>
#include <cstdint>

namespace mt::fxt {

constexpr uint64_t kMagic = 0x0016547846040010ULL;
constexpr size_t kMaxArgs = 15;  // an event's arguments: a 4-bit count

// Record types.
constexpr uint64_t kMetadataRecord = 0, kInitRecord = 1, kStringRecord = 2, kThreadRecord = 3,
                   kEventRecord = 4, kKernelObjectRecord = 7;
// Event types.
constexpr int kInstant = 0, kCounter = 1, kBegin = 2, kEnd = 3, kComplete = 4, kAsyncBegin = 5,
              kAsyncInstant = 6, kAsyncEnd = 7, kFlowBegin = 8, kFlowStep = 9, kFlowEnd = 10;
// Argument types.
constexpr int kArgNull = 0, kArgInt32 = 1, kArgUint32 = 2, kArgInt64 = 3, kArgUint64 = 4,
              kArgDouble = 5, kArgString = 6, kArgPointer = 7, kArgKoid = 8, kArgBool = 9;
// Kernel object types.
constexpr uint64_t kObjProcess = 1, kObjThread = 2;

}  // namespace mt::fxt
