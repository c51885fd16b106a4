// Compressed traces, gzip and xz: the same content read back, a file cut short and a corrupt one
// told apart, and a trace read the same from either compression.
#include <gtest/gtest.h>
#include <lzma.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "kernscope/open.hpp"
#include "readers/compressed_file.hpp"
#include "support/test_files.hpp"

namespace kernscope {
namespace {

namespace fs = std::filesystem;
using readers::Compression;

std::string xz_bytes(const std::string& content) {
  std::string out(lzma_stream_buffer_bound(content.size()), '\0');
  std::size_t written = 0;
  const lzma_ret rc = lzma_easy_buffer_encode(6, LZMA_CHECK_CRC64, nullptr,
                                              reinterpret_cast<const std::uint8_t*>(content.data()), content.size(),
                                              reinterpret_cast<std::uint8_t*>(out.data()), &written, out.size());
  EXPECT_EQ(rc, LZMA_OK);
  out.resize(written);
  return out;
}

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

void write_gzip(const fs::path& path, const std::string& content) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, content.data(), static_cast<unsigned>(content.size())), static_cast<int>(content.size()));
  gzclose(f);
}

// Text that compresses but not to nothing: lines of a pseudo-random CSV, about 600 kB.
std::string sample_content() {
  std::mt19937 random(7);
  std::string text;
  for (int i = 0; i < 20000; ++i) text += std::to_string(random()) + "," + std::to_string(i % 97) + ",kernel_" + std::to_string(random() % 50) + "\n";
  return text;
}

class CompressedFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kernscope_compressed_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(CompressedFileTest, GzipAndXzGiveTheSameContent) {
  const std::string content = sample_content();
  write_gzip(dir_ / "a.gz", content);
  write_file(dir_ / "a.xz", xz_bytes(content));
  for (const auto& [name, kind] : {std::pair{"a.gz", Compression::kGzip}, std::pair{"a.xz", Compression::kXz}}) {
    std::ifstream in(dir_ / name, std::ios::binary);
    unsigned char magic[6] = {};
    in.read(reinterpret_cast<char*>(magic), 6);
    EXPECT_EQ(readers::compression_of(magic, 6), kind) << name;
    auto bytes = readers::decompress_file((dir_ / name).string(), kind);
    ASSERT_TRUE(bytes) << bytes.error().message;
    EXPECT_EQ(std::string(bytes->begin(), bytes->end()), content) << name;
    const auto start = readers::decompressed_head((dir_ / name).string(), kind, 100);
    EXPECT_EQ(std::string(start.begin(), start.end()), content.substr(0, 100)) << name;
  }
  const unsigned char plain[] = {'{', '"', 'a'};
  EXPECT_EQ(readers::compression_of(plain, 3), Compression::kNone);
}

TEST_F(CompressedFileTest, XzCutShortIsTruncatedAndNotCorrupt) {
  const std::string content = sample_content();
  const std::string packed = xz_bytes(content);
  write_file(dir_ / "cut.xz", packed.substr(0, packed.size() / 2));
  auto whole = readers::decompress_file((dir_ / "cut.xz").string(), Compression::kXz);
  ASSERT_FALSE(whole);
  EXPECT_NE(whole.error().message.find("truncated xz data"), std::string::npos) << whole.error().message;

  // Read in blocks, the content up to the cut comes back and the reader says it was cut short.
  auto reader = readers::Decompressor::open((dir_ / "cut.xz").string(), Compression::kXz);
  ASSERT_TRUE(reader);
  std::string got;
  std::vector<unsigned char> block(1 << 15);
  while (true) {
    auto n = (*reader)->read(block.data(), block.size());
    ASSERT_TRUE(n) << n.error().message;
    if (*n == 0) break;
    got.append(block.begin(), block.begin() + static_cast<std::ptrdiff_t>(*n));
  }
  EXPECT_TRUE((*reader)->cut_short());
  EXPECT_GT(got.size(), 0u);
  EXPECT_EQ(got, content.substr(0, got.size()));
}

TEST_F(CompressedFileTest, XzWithDamagedBytesIsCorrupt) {
  std::string packed = xz_bytes(sample_content());
  for (std::size_t i = packed.size() / 3; i < packed.size() / 3 + 64; ++i) packed[i] = static_cast<char>(packed[i] ^ 0x5a);
  write_file(dir_ / "bad.xz", packed);
  auto bytes = readers::decompress_file((dir_ / "bad.xz").string(), Compression::kXz);
  ASSERT_FALSE(bytes);
  EXPECT_NE(bytes.error().message.find("corrupted xz data"), std::string::npos) << bytes.error().message;
}

// The same trace, gzip and xz: the same kernels, through both readers (SQLite image, streamed JSON).
TEST_F(CompressedFileTest, TracesReadTheSameFromEitherCompression) {
  for (const std::string fixture : {"nsys/gaps_memset_sync/trace.sqlite.xz", "kineto/triton_example__triton_example.json.xz"}) {
    const fs::path gz = testing::fixtures_dir() / fixture;
    const fs::path xz = dir_ / (gz.stem().string() + ".xz");
    write_file(xz, xz_bytes(testing::read_file(gz)));
    auto a = open_trace(gz.string());
    auto b = open_trace(xz.string());
    ASSERT_TRUE(a) << a.error().message;
    ASSERT_TRUE(b) << b.error().message;
    EXPECT_EQ(a->kernels.size(), b->kernels.size()) << fixture;
    EXPECT_EQ(a->kernels.start_ns, b->kernels.start_ns) << fixture;
    EXPECT_GT(a->kernels.size(), 0u) << fixture;
  }
}

}  // namespace
}  // namespace kernscope
