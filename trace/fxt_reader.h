// Reads an FXT trace back into records: for `moontrace dump` and for the
// tests, which check every trace against Perfetto's import rules.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace mt {

struct FxtArgValue {
  std::string name;
  int type = 0;      // FXT argument type: 0 null, 1 int32 .. 9 bool
  int64_t i = 0;     // int32, int64
  uint64_t u = 0;    // uint32, uint64, pointer, koid, bool (0 or 1)
  double d = 0;      // double
  std::string text;  // string
};

struct FxtRecord {
  uint64_t offset = 0;  // byte offset in the file
  int type = 0;         // FXT record type: 1 init, 2 string, 3 thread, 4 event, 7 kobj
  // events
  int event_type = -1;  // 0 instant, 1 counter, 2 begin, 3 end, 4 complete, 5-7 async, 8-10 flow
  uint64_t ts = 0;
  uint64_t pid = 0, tid = 0;   // also thread records
  std::string category, name;  // name: also kernel objects; the text of string records
  uint64_t extra = 0;          // counter id, end time (complete), async correlation id or flow id
  // kernel objects
  int object_type = 0;  // 1 process, 2 thread
  uint64_t koid = 0;
  // initialization
  uint64_t ticks_per_second = 0;
  // string and thread records: the table index they define
  uint32_t index = 0;
  std::vector<FxtArgValue> args;
};

// Parses a whole trace; throws mt::Error("offset N: why") when malformed
// (bad magic, a record of size 0 or running past the end, a ref to an unset
// string or thread, more than 15 arguments, an argument running past its
// record). Metadata and unknown record types are skipped; string and thread
// records are returned too.
std::vector<FxtRecord> read_fxt(const std::string &bytes);
// The same, handing each record to `each` as soon as it is read, so that the
// records before a malformed one are seen.
void read_fxt(const std::string &bytes, const std::function<void(const FxtRecord &)> &each);
// Up to `size` bytes of the trace into `buf`; 0 at its end. May throw.
using FxtByteSource = std::function<size_t(char *buf, size_t size)>;
// The same, reading the trace from `source` a record at a time (bounded
// memory, whatever its length: see TraceFileReader for files).
void read_fxt(const FxtByteSource &source, const std::function<void(const FxtRecord &)> &each);

// One line without the newline:
//   init ticks_per_second=1000000000
//   12345 instant pid=10 tid=11 io_uring/submit {req=0xffff888100, user_data=7}
//   12345 complete pid=10 tid=11 sys/enter end_ts=12400
//   12345 flow_begin pid=10 tid=11 io_uring/req flow_id=77
//   kobj thread koid=11 name="x" {process=10}
//   string 3 "io_uring"        thread 1 pid=10 tid=11
std::string fxt_record_text(const FxtRecord &r);
// One JSON object, e.g. {"offset":64,"type":"event","event":"instant","ts":12345,
// "pid":10,"tid":11,"category":"io_uring","name":"submit","args":{"user_data":7}}.
std::string fxt_record_json(const FxtRecord &r);

}  // namespace mt
