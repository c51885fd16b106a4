// Nsight Systems .nsys-rep (and the older .qdrep) files: binary reports only nsys can read, so
// they are exported with `nsys export --type sqlite` into a temporary folder and read from there.
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "base/find_program.hpp"
#include "readers/nsys_sqlite/nsys_sqlite_reader.hpp"
#include "readers/reader_registry.hpp"

namespace kernscope::readers {
namespace {

// A folder removed with everything in it when it goes out of scope, whatever path was taken.
class TemporaryFolder {
 public:
  static Result<TemporaryFolder> create() {
    char name[] = "/tmp/kernscope-export-XXXXXX";
    if (!::mkdtemp(name)) return make_error(ErrorCode::kIo, "cannot create a temporary folder for the export");
    return TemporaryFolder(name);
  }
  TemporaryFolder(TemporaryFolder&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  TemporaryFolder(const TemporaryFolder&) = delete;
  TemporaryFolder& operator=(const TemporaryFolder&) = delete;
  TemporaryFolder& operator=(TemporaryFolder&&) = delete;
  ~TemporaryFolder() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  explicit TemporaryFolder(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

Match sniff(const Probe& probe) {
  return probe.has_extension(".nsys-rep") || probe.has_extension(".qdrep") ? Match::kYes : Match::kNo;
}

Result<void> run_nsys_export(const std::string& nsys, const std::string& report, const std::string& out) {
  const pid_t child = ::fork();
  if (child < 0) return make_error(ErrorCode::kIo, "cannot start nsys");
  if (child == 0) {
    std::vector<const char*> argv = {nsys.c_str(), "export", "--type", "sqlite", "--force-overwrite", "true",
                                     "--output", out.c_str(), report.c_str(), nullptr};
    ::execv(nsys.c_str(), const_cast<char* const*>(argv.data()));
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return make_error(ErrorCode::kBadInput, report + ": `nsys export --type sqlite` failed");
  }
  return {};
}

Result<Trace> read(const Probe& probe, const OpenOptions& options) {
  const std::string nsys = find_program("nsys");
  if (nsys.empty()) {
    return make_error(ErrorCode::kBadInput,
                      probe.path + ": .nsys-rep files need Nsight Systems to export them, and nsys is not on "
                                   "PATH; run `nsys export --type sqlite " + probe.path + "` and pass the .sqlite file");
  }
  auto folder = TemporaryFolder::create();
  if (!folder) return std::unexpected(folder.error());
  const std::string exported = folder->path() + "/export.sqlite";
  if (auto ok = run_nsys_export(nsys, probe.path, exported); !ok) return std::unexpected(ok.error());
  auto db = nsys::Database::open_file(exported);
  if (!db) return std::unexpected(db.error());
  return nsys::read_export(*db, probe.path, options, &db->file_path());
}

}  // namespace

ReaderEntry nsys_rep_reader() { return {"nsys-rep", 10, sniff, read}; }

}  // namespace kernscope::readers
