#include "readers/ncu/text_input.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "readers/compressed_file.hpp"

namespace kernscope::readers {

Result<std::string> read_text_input(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return make_error(ErrorCode::kNotFound, path + ": no such file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(ErrorCode::kNotFound, path + ": cannot open");
  unsigned char head[6] = {0, 0, 0, 0, 0, 0};
  in.read(reinterpret_cast<char*>(head), sizeof head);
  if (const Compression compression = compression_of(head, static_cast<std::size_t>(in.gcount()));
      compression != Compression::kNone) {
    auto bytes = decompress_file(path, compression);
    if (!bytes) return std::unexpected(bytes.error());
    return std::string(bytes->begin(), bytes->end());
  }
  in.clear();
  in.seekg(0);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace kernscope::readers
