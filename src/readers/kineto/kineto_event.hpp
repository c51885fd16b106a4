// One trace event as parsed from JSON, before it becomes a row of the model. Views point into
// the parser's buffers and live until the next event is parsed.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string_view>

#include "kernscope/error.hpp"
#include "readers/kineto/json_splitter.hpp"

namespace kernscope::kineto {

// pid and tid are numbers in Kineto and sometimes strings in Chrome traces.
struct IdValue {
  bool present = false;
  bool is_text = false;
  std::int64_t number = 0;
  std::string_view text;
};

struct KinetoEvent {
  std::string_view ph, cat, name;
  IdValue pid, tid;
  std::string_view ts, dur;  // raw number tokens (microseconds); empty when absent
  std::string_view id;       // flow id token

  // args, whatever the category (-1: absent)
  std::int64_t device = -1, stream = -1, context = -1, correlation = -1, external_id = -1;
  std::int64_t registers = -1, shared_memory = -1, bytes = -1, graph_id = -1, graph_node_id = -1;
  std::int64_t cbid = -1, wait_event_id = -1, graph_exec_id = -1;
  std::array<std::int32_t, 3> grid{0, 0, 0}, block{0, 0, 0};
  bool has_grid = false, has_block = false;
  std::string_view arg_name, arg_labels;  // metadata events: process_name, thread_name, labels
  std::string_view input_dims, input_types, concrete_inputs;  // cpu_op with record_shapes: the arrays' JSON text
  std::string_view domain;  // a range's NVTX domain, as kernscope's export writes it (absent in PyTorch's traces)
};

// Parses events with simdjson On-Demand; one instance per thread.
class EventParser {
 public:
  // simdjson's On-Demand API runs the kernels the translation unit was compiled for, so the
  // parser is compiled twice (AVX2 and portable) and the CPU picks one at run time.
  class Backend {
   public:
    virtual ~Backend() = default;
    virtual Result<void> parse(std::string_view text, std::size_t capacity, KinetoEvent& out) = 0;
  };

  EventParser();
  // `text` must have kSpanPadding readable bytes after it. On failure the message says why
  // (the caller may repair the text and try again).
  Result<void> parse(std::string_view text, std::size_t capacity, KinetoEvent& out) {
    return backend_->parse(text, capacity, out);
  }
  // "haswell" or "fallback": the simdjson kernel in use.
  const char* kernel() const { return kernel_; }

 private:
  std::unique_ptr<Backend> backend_;
  const char* kernel_ = "";
};

}  // namespace kernscope::kineto
