// The PyTorch-profiler (Kineto) / Chrome trace-event JSON reader in the registry, plain, gzip or xz.
#include "readers/kineto/byte_source.hpp"
#include "readers/kineto/kineto_reader.hpp"
#include "readers/reader_registry.hpp"

namespace kernscope::readers {
namespace {

// JSON starts with '{' or '[' after whitespace; the layout (traceEvents, or a bare event array) is
// checked while reading, so this is kMaybe: a reader of another JSON dialect that checks its
// own keys would say kYes and win.
Match sniff(const Probe& probe) {
  for (unsigned char c : probe.head) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    return c == '{' || c == '[' ? Match::kMaybe : Match::kNo;
  }
  return Match::kNo;
}

Result<Trace> read(const Probe& probe, const OpenOptions& options) {
  auto source = kineto::open_byte_source(probe.path);  // streams, decompressing on its own thread
  if (!source) return std::unexpected(source.error());
  return kineto::read_kineto(**source, probe.path, options);
}

}  // namespace

ReaderEntry kineto_json_reader() { return {"kineto-json", 10, sniff, read}; }

}  // namespace kernscope::readers
