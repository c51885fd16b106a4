// Sniffs a trace file and hands it to the reader for its format. Compressed exports are inflated
// into memory and given to SQLite as an image (no temporary file); JSON (PyTorch profiler, Chrome)
// is streamed, compressed or not; .nsys-rep files are exported with nsys when it is on PATH.
#include "kernscope/open.hpp"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "base/find_program.hpp"
#include "readers/kineto/byte_source.hpp"
#include "readers/kineto/kineto_reader.hpp"
#include "readers/nsys_sqlite/nsys_sqlite_reader.hpp"

namespace kernscope {
namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Result<std::vector<unsigned char>> inflate_gzip(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (!file) return make_error(ErrorCode::kBadInput, path + ": cannot open gzip file");
  gzbuffer(file, 1 << 20);
  std::vector<unsigned char> out;
  std::array<unsigned char, 1 << 16> chunk{};
  while (true) {
    const int n = gzread(file, chunk.data(), static_cast<unsigned>(chunk.size()));
    if (n < 0) {
      int code = 0;
      std::string why = gzerror(file, &code);
      gzclose(file);
      return make_error(ErrorCode::kBadInput, path + ": corrupted gzip data (" + why + ")");
    }
    if (n == 0) break;
    out.insert(out.end(), chunk.begin(), chunk.begin() + n);
  }
  int code = 0;
  const char* why = gzerror(file, &code);
  std::string message = why ? why : "";
  const int close_rc = gzclose_r(file);
  if (code != Z_OK && code != Z_STREAM_END) {
    return make_error(ErrorCode::kBadInput, path + ": truncated or corrupted gzip data (" + message + ")");
  }
  if (close_rc != Z_OK) {
    return make_error(ErrorCode::kBadInput, path + ": truncated gzip data");
  }
  return out;
}

// Runs `nsys export --type sqlite` into a temporary file; without nsys, says how to export.
Result<std::string> export_nsys_rep(const std::string& path) {
  const std::string nsys = find_program("nsys");
  if (nsys.empty()) {
    return make_error(ErrorCode::kBadInput,
                      path + ": .nsys-rep files need Nsight Systems to export them, and nsys is not on "
                             "PATH; run `nsys export --type sqlite " + path + "` and pass the .sqlite file");
  }
  char tmpl[] = "/tmp/kernscope-export-XXXXXX";
  char* dir = ::mkdtemp(tmpl);
  if (!dir) return make_error(ErrorCode::kIo, "cannot create a temporary folder for the export");
  const std::string out = std::string(dir) + "/export.sqlite";
  const pid_t child = ::fork();
  if (child < 0) return make_error(ErrorCode::kIo, "cannot start nsys");
  if (child == 0) {
    std::vector<const char*> argv = {nsys.c_str(), "export", "--type", "sqlite",
                                     "--force-overwrite", "true", "--output", out.c_str(),
                                     path.c_str(), nullptr};
    ::execv(nsys.c_str(), const_cast<char* const*>(argv.data()));
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return make_error(ErrorCode::kBadInput, path + ": `nsys export --type sqlite` failed");
  }
  return out;
}

// JSON traces (PyTorch profiler / Kineto, Chrome trace) start with '{' or '[' after whitespace.
bool looks_like_json(const unsigned char* data, std::size_t size) {
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == ' ' || data[i] == '\n' || data[i] == '\r' || data[i] == '\t') continue;
    return data[i] == '{' || data[i] == '[';
  }
  return false;
}

// The first bytes of a gzip file's content, to tell a compressed export from compressed JSON.
std::vector<unsigned char> gzip_head(const std::string& path) {
  std::vector<unsigned char> head(64);
  gzFile file = gzopen(path.c_str(), "rb");
  if (!file) return {};
  const int n = gzread(file, head.data(), static_cast<unsigned>(head.size()));
  gzclose_r(file);
  head.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return head;
}

Result<Trace> open_json(const std::string& path, const OpenOptions& options) {
  auto source = kineto::open_byte_source(path);
  if (!source) return std::unexpected(source.error());
  return kineto::read_kineto(**source, path, options);
}

}  // namespace

Result<Trace> open_trace(const std::string& path, const OpenOptions& options) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) {
    return make_error(ErrorCode::kNotFound, path + ": no such file");
  }
  if (std::filesystem::is_directory(status)) {
    return make_error(ErrorCode::kBadInput, path + ": is a directory, not a trace file");
  }

  std::array<unsigned char, 16> head{};
  std::size_t head_size = 0;
  {
    std::ifstream in(path, std::ios::binary);
    if (!in) return make_error(ErrorCode::kBadInput, path + ": cannot read file");
    in.read(reinterpret_cast<char*>(head.data()), head.size());
    head_size = static_cast<std::size_t>(in.gcount());
  }
  if (head_size == 0) return make_error(ErrorCode::kBadInput, path + ": empty file");

  if (nsys::sniff_sqlite(head.data(), head_size)) {
    auto db = nsys::Database::open_file(path);
    if (!db) return std::unexpected(db.error());
    return nsys::read_export(*db, path, options, &path);
  }
  if (head_size >= 2 && head[0] == 0x1f && head[1] == 0x8b) {
    const auto inflated_head = gzip_head(path);
    if (looks_like_json(inflated_head.data(), inflated_head.size())) return open_json(path, options);
    auto bytes = inflate_gzip(path);
    if (!bytes) return std::unexpected(bytes.error());
    if (!nsys::sniff_sqlite(bytes->data(), bytes->size())) {
      return make_error(ErrorCode::kBadInput,
                        path + ": compressed file holds neither an SQLite database nor JSON (supported: "
                               "Nsight Systems .sqlite exports and PyTorch profiler / Chrome JSON traces, plain or gzip-compressed)");
    }
    auto db = nsys::Database::open_image(std::move(*bytes), path);
    if (!db) return std::unexpected(db.error());
    return nsys::read_export(*db, path, options);
  }
  if (looks_like_json(head.data(), head_size)) return open_json(path, options);
  if (ends_with(path, ".nsys-rep") || ends_with(path, ".qdrep")) {
    auto exported = export_nsys_rep(path);
    if (!exported) return std::unexpected(exported.error());
    auto db = nsys::Database::open_file(*exported);
    if (!db) return std::unexpected(db.error());
    auto trace = nsys::read_export(*db, path, options, &*exported);
    std::filesystem::remove_all(std::filesystem::path(*exported).parent_path(), ec);
    return trace;
  }
  return make_error(ErrorCode::kBadInput,
                    path + ": unrecognized trace format (supported: Nsight Systems .sqlite exports and PyTorch "
                           "profiler / Chrome JSON traces, plain or gzip-compressed, and .nsys-rep with nsys on PATH)");
}

}  // namespace kernscope
