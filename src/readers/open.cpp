// Opens a trace: probes the file (its first bytes, decompressed when gzip or xz) and hands it to
// the registered reader that recognises it best (readers/reader_registry.hpp).
#include "kernscope/open.hpp"

#include <filesystem>
#include <fstream>

#include "readers/compressed_file.hpp"
#include "readers/reader_registry.hpp"

namespace kernscope {
namespace {

// Enough for any sniffer: a SQLite header is 100 bytes, JSON needs its first non-blank byte.
constexpr std::size_t kProbeBytes = 4096;

Result<readers::Probe> probe_file(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) return make_error(ErrorCode::kNotFound, path + ": no such file");
  if (std::filesystem::is_directory(status)) {
    return make_error(ErrorCode::kBadInput, path + ": is a directory, not a trace file");
  }
  readers::Probe probe;
  probe.path = path;
  probe.head.resize(kProbeBytes);
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(ErrorCode::kBadInput, path + ": cannot read file");
  in.read(reinterpret_cast<char*>(probe.head.data()), static_cast<std::streamsize>(probe.head.size()));
  probe.head.resize(static_cast<std::size_t>(in.gcount()));
  if (probe.head.empty()) return make_error(ErrorCode::kBadInput, path + ": empty file");
  probe.compression = readers::compression_of(probe.head.data(), probe.head.size());
  if (probe.compression != readers::Compression::kNone) {
    probe.head = readers::decompressed_head(path, probe.compression, kProbeBytes);
  }
  return probe;
}

}  // namespace

Result<Trace> open_trace(const std::string& path, const OpenOptions& options) {
  auto probe = probe_file(path);
  if (!probe) return std::unexpected(probe.error());
  const readers::ReaderEntry* best = nullptr;
  readers::Match best_match = readers::Match::kNo;
  for (const auto& reader : readers::readers()) {
    const readers::Match match = reader.sniff(*probe);
    if (match > best_match || (match != readers::Match::kNo && match == best_match && reader.priority > best->priority)) {
      best = &reader;
      best_match = match;
    }
  }
  if (best) return best->read(*probe, options);
  if (probe->compression != readers::Compression::kNone) {
    return make_error(ErrorCode::kBadInput,
                      path + ": compressed file holds neither an SQLite database nor JSON (supported: "
                             "Nsight Systems .sqlite exports and PyTorch profiler / Chrome JSON traces, plain, gzip- or xz-compressed)");
  }
  return make_error(ErrorCode::kBadInput,
                    path + ": unrecognized trace format (supported: Nsight Systems .sqlite exports and PyTorch "
                           "profiler / Chrome JSON traces, plain, gzip- or xz-compressed, and .nsys-rep with nsys on PATH)");
}

}  // namespace kernscope
