// The Kineto reader's pieces: exact time parsing, short names, the streaming splitter, repairs,
// and event mapping on small hand-written documents whose expected rows follow from the text.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "model/nvtx_names.hpp"
#include "kernscope/open.hpp"
#include "readers/kineto/byte_source.hpp"
#include "readers/kineto/decimal_time.hpp"
#include "readers/kineto/json_repair.hpp"
#include "readers/kineto/json_splitter.hpp"
#include "model/kernel_short_name.hpp"
#include "readers/kineto/kineto_reader.hpp"
#include "support/test_files.hpp"

namespace kernscope {
namespace {

using kineto::microseconds_text_to_ns;

TEST(KinetoTime, ParsesMicrosecondsExactly) {
  EXPECT_EQ(microseconds_text_to_ns("0"), 0);
  EXPECT_EQ(microseconds_text_to_ns("1"), 1000);
  EXPECT_EQ(microseconds_text_to_ns("0.033"), 33);
  EXPECT_EQ(microseconds_text_to_ns("4.928"), 4928);
  // Absolute microseconds with nanosecond digits: 19 significant digits, beyond a double.
  EXPECT_EQ(microseconds_text_to_ns("1712195495519689.047"), 1712195495519689047);
  EXPECT_EQ(microseconds_text_to_ns("1712195495505583.0"), 1712195495505583000);
  EXPECT_EQ(microseconds_text_to_ns("4203669603771.648"), 4203669603771648);
  EXPECT_EQ(microseconds_text_to_ns("1.5e3"), 1500000);
  EXPECT_EQ(microseconds_text_to_ns("15E-1"), 1500);
  EXPECT_EQ(microseconds_text_to_ns("-2.5"), -2500);
  // Below a nanosecond: half away from zero on the decimal digits.
  EXPECT_EQ(microseconds_text_to_ns("0.0005"), 1);
  EXPECT_EQ(microseconds_text_to_ns("0.00049"), 0);
  EXPECT_EQ(microseconds_text_to_ns("0.0000005"), 0);
  EXPECT_EQ(microseconds_text_to_ns("1.0015"), 1002);
  EXPECT_EQ(microseconds_text_to_ns("-0.0005"), -1);
  // A 4th decimal on an absolute timestamp: 20 significant digits, the last one rounds.
  EXPECT_EQ(microseconds_text_to_ns("1712195495519689.0475"), 1712195495519689048);
  EXPECT_EQ(microseconds_text_to_ns("1712195495519689.0474"), 1712195495519689047);
}

TEST(KinetoTime, RejectsWhatIsNotANumberOrOverflows) {
  for (const char* bad : {"", "-", ".", "1.2.3", "abc", "1e", "12x", "NaN", "1e400"}) {
    EXPECT_FALSE(microseconds_text_to_ns(bad).has_value()) << bad;
  }
  EXPECT_FALSE(microseconds_text_to_ns("9300000000000000").has_value());  // 9.3e18 ns > int64
  EXPECT_EQ(microseconds_text_to_ns("9200000000000000"), 9200000000000000000);
  EXPECT_EQ(microseconds_text_to_ns("0e400"), 0);
}

// nsys's own shortName for every kernel of the nsys fixtures equals the name derived from the
// demangled one: the rule is checked against Nsight Systems, not against itself.
TEST(KinetoShortName, MatchesNsysShortNamesOnRealExports) {
  std::size_t checked = 0;
  for (const char* fixture : {"llama_decode_h200", "graph_tiny_kernels_h200", "cloverleaf_perlmutter"}) {
    auto trace = open_trace((testing::fixtures_dir() / "nsys" / fixture / "trace.sqlite.xz").string());
    ASSERT_TRUE(trace.has_value()) << trace.error().message;
    const auto& k = trace->kernels;
    std::set<std::pair<StringId, StringId>> pairs;
    for (RowIndex i = 0; i < k.size(); ++i) pairs.emplace(k.demangled_name[i], k.short_name[i]);
    for (const auto& [demangled, short_name] : pairs) {
      EXPECT_EQ(kernel_short_name(trace->strings.get(demangled)), trace->strings.get(short_name))
          << trace->strings.get(demangled);
      ++checked;
    }
  }
  EXPECT_GT(checked, 100u);
  // Kineto's demangler spells lambdas and anonymous namespaces differently.
  EXPECT_EQ(kernel_short_name("void at::native::(anonymous namespace)::CatArrayBatchedCopy_aligned16_contig<"
                                      "at::native::(anonymous namespace)::OpaqueType<4u>, unsigned int, 1, 128, 1>"
                                      "(at::native::(anonymous namespace)::OpaqueType<4u>*, int, unsigned int)"),
            "CatArrayBatchedCopy_aligned16_contig");
  EXPECT_EQ(kernel_short_name("triton_poi_fused_add_cos_sin_0"), "triton_poi_fused_add_cos_sin_0");
  EXPECT_EQ(kernel_short_name("void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl<"
                                      "at::native::CUDAFunctor_add<float> >(at::TensorIteratorBase&, "
                                      "at::native::CUDAFunctor_add<float> const&)::{lambda(int)#1}>(int, "
                                      "at::native::gpu_kernel_impl<at::native::CUDAFunctor_add<float> >("
                                      "at::TensorIteratorBase&, at::native::CUDAFunctor_add<float> const&)::"
                                      "{lambda(int)#1})"),
            "elementwise_kernel");
}

struct Split {
  std::vector<std::string> members, elements;
  std::vector<bool> suspicious;
  kineto::SplitResult result;
};

Result<Split> split(const std::string& json, std::size_t chunk = 7) {
  Split out;
  auto source = kineto::memory_byte_source(json);
  kineto::JsonSplitter splitter(chunk, 1 << 20);
  auto r = splitter.run(
      *source,
      [&](std::string_view key, const kineto::Span& value) -> Result<void> {
        out.members.push_back(std::string(key) + "=" + std::string(value.text));
        return {};
      },
      [&](const kineto::Span& e) -> Result<void> {
        out.elements.emplace_back(e.text);
        out.suspicious.push_back(e.suspicious);
        return {};
      });
  if (!r) return std::unexpected(r.error());
  out.result = *r;
  return out;
}

TEST(KinetoSplitter, FindsMembersAndElementsAcrossChunkBoundaries) {
  const std::string json =
      "\xEF\xBB\xBF{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0}],\n"
      "\"traceEvents\": [ {\"name\": \"a,b}]\\\"\", \"args\": {\"x\": [1, 2]}},\n {\"ph\": \"X\"} ],"
      "\"traceName\": \"t.json\", \"baseTimeNanoseconds\": 1700000000000000000}";
  for (std::size_t chunk : {1, 3, 7, 64, 4096}) {
    auto s = split(json, chunk);
    ASSERT_TRUE(s.has_value()) << chunk << ": " << s.error().message;
    ASSERT_EQ(s->elements.size(), 2u);
    EXPECT_EQ(s->elements[0], "{\"name\": \"a,b}]\\\"\", \"args\": {\"x\": [1, 2]}}");
    EXPECT_EQ(s->elements[1], "{\"ph\": \"X\"}");
    EXPECT_FALSE(s->suspicious[0]);
    ASSERT_EQ(s->members.size(), 4u);
    EXPECT_EQ(s->members[0], "schemaVersion=1");
    EXPECT_EQ(s->members[1], "deviceProperties=[{\"id\": 0}]");
    EXPECT_EQ(s->members[3], "baseTimeNanoseconds=1700000000000000000");
    EXPECT_FALSE(s->result.truncated);
  }
}

TEST(KinetoSplitter, TruncatedDocumentKeepsCompleteElements) {
  auto s = split("{\"traceEvents\": [{\"a\": 1}, {\"b\": 2}, {\"c\": \"cut her");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->elements.size(), 2u);
  EXPECT_TRUE(s->result.truncated);
  EXPECT_EQ(s->result.truncated_bytes, static_cast<std::int64_t>(std::string("{\"c\": \"cut her").size()));
  // Cut right after an element, and right after the array.
  for (const char* text : {"{\"traceEvents\": [{\"a\": 1},", "{\"traceEvents\": [{\"a\": 1}]", "[{\"a\": 1}"}) {
    auto t = split(text);
    ASSERT_TRUE(t.has_value()) << text;
    EXPECT_EQ(t->elements.size(), 1u) << text;
    EXPECT_TRUE(t->result.truncated) << text;
  }
}

TEST(KinetoSplitter, MarksRepairableElementsAndCountsTrailingCommas) {
  auto s = split("{\"traceEvents\": [{\"name\": \"say \"hi\" now\"}, {\"name\": \"tab\there\"}, "
                 "{\"p\": \"C:\\qtemp\"}, {\"a\": [1, 2,], }, {\"ok\": 1},],}");
  ASSERT_TRUE(s.has_value()) << s.error().message;
  ASSERT_EQ(s->elements.size(), 5u);
  EXPECT_EQ(s->elements[0], "{\"name\": \"say \"hi\" now\"}");  // the raw quotes stay inside
  EXPECT_EQ(s->suspicious, (std::vector<bool>{true, true, true, true, false}));
  EXPECT_EQ(s->result.trailing_commas, 2);
}


TEST(KinetoRepair, FixesEachKindOfMistake) {
  kineto::RepairCounts counts;
  EXPECT_EQ(kineto::repair_json("{\"n\": \"say \"hi\" now\", \"p\": \"C:\\temp\\x\", \"t\": \"a\tb\", \"l\": [1,],}", counts),
            "{\"n\": \"say \\\"hi\\\" now\", \"p\": \"C:\\temp\\\\x\", \"t\": \"a\\u0009b\", \"l\": [1]}");
  EXPECT_EQ(counts.quotes, 2);
  EXPECT_EQ(counts.escapes, 1);  // "\t" in C:\temp is a valid escape (a tab); "\x" is not
  EXPECT_EQ(counts.control_chars, 1);
  EXPECT_EQ(counts.trailing_commas, 2);
  kineto::RepairCounts utf8;
  EXPECT_EQ(kineto::repair_json("{\"n\": \"caf\xC3\xA9 \xFF\xC3\"}", utf8), "{\"n\": \"caf\xC3\xA9 \\ufffd\\ufffd\"}");
  EXPECT_EQ(utf8.invalid_utf8, 2);
}

Result<Trace> read(const std::string& json, bool partial = false) {
  auto source = kineto::memory_byte_source(json);
  OpenOptions options;
  options.partial = partial;
  return kineto::read_kineto(*source, "test.json", options);
}

TEST(KinetoReader, MapsEveryEventKindWithExactTimes) {
  const std::string json = R"json({
  "schemaVersion": 1,
  "deviceProperties": [{"id": 0, "name": "NVIDIA H200", "totalGlobalMem": 150000000000, "computeMajor": 9,
                        "computeMinor": 0, "numSms": 132}],
  "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8},
  "cuda_driver_version": 13000,
  "traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 4242, "tid": 4243, "ts": 10.000, "dur": 5.5,
   "args": {"External id": 7, "Input Dims": [[1, 2], [2, 3]]}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 4242, "tid": 4243, "ts": 11.25, "dur": 2.001,
   "args": {"External id": 7, "cbid": 211, "correlation": 99}},
  {"ph": "X", "cat": "kernel", "name": "void gemv<float>(float*, int)", "pid": 0, "tid": 7, "ts": 20.5, "dur": 3.333,
   "args": {"External id": 7, "queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": 99,
            "registers per thread": 32, "shared memory": 4096, "blocks per SM": 0.5, "warps per SM": 2.0,
            "grid": [64, 2, 1], "block": [128, 1, 1], "est. achieved occupancy %": 12,
            "graph id": 5, "graph node id": 55}},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": 7, "ts": 30, "dur": 1,
   "args": {"device": 0, "context": 1, "stream": 7, "correlation": 100, "bytes": 4096, "memory bandwidth (GB/s)": 4.1}},
  {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 7, "ts": 31, "dur": 0.5,
   "args": {"device": 0, "context": 1, "stream": 7, "correlation": 101, "bytes": 64}},
  {"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event", "pid": 0, "tid": 7, "ts": 32, "dur": 0.25,
   "args": {"device": 0, "context": 1, "stream": 7, "correlation": 102, "wait_on_cuda_event_id": 17}},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 4242, "tid": 4243, "ts": 9, "dur": 40},
  {"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#1", "pid": 0, "tid": 7, "ts": 20, "dur": 12},
  {"ph": "X", "cat": "python_function", "name": "forward", "pid": 4242, "tid": 4243, "ts": 9, "dur": 1},
  {"ph": "s", "id": 99, "pid": 4242, "tid": 4243, "ts": 11.25, "cat": "ac2g", "name": "ac2g"},
  {"ph": "f", "id": 99, "pid": 0, "tid": 7, "ts": 20.5, "cat": "ac2g", "name": "ac2g", "bp": "e"},
  {"name": "process_name", "ph": "M", "ts": 0, "pid": 4242, "tid": 0, "args": {"name": "python3"}},
  {"name": "thread_name", "ph": "M", "ts": 0, "pid": 4242, "tid": 4243, "args": {"name": "main"}}
  ],
  "traceName": "x.json",
  "baseTimeNanoseconds": 1700000000000000000
})json";
  auto t = read(json);
  ASSERT_TRUE(t.has_value()) << t.error().message;
  constexpr TimeNs base = 1700000000000000000;
  EXPECT_EQ(t->source.format, "kineto-json");
  ASSERT_TRUE(t->source.distributed.has_value());
  EXPECT_EQ(t->source.distributed->rank, 3);
  EXPECT_EQ(t->source.distributed->world_size, 8);
  ASSERT_EQ(t->devices.size(), 1u);
  EXPECT_EQ(t->devices[0].sm_count, 132);
  EXPECT_EQ(t->devices[0].compute_major, 9);

  const std::int64_t process = std::int64_t{4242} << 24;
  const auto& k = t->kernels;
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k.start_ns[0], base + 20500);
  EXPECT_EQ(k.end_ns[0], base + 20500 + 3333);
  EXPECT_EQ(k.global_pid[0], process);  // the launching process, through correlation 99
  EXPECT_EQ(k.stream_id[0], 7u);
  EXPECT_EQ(k.correlation_id[0], 99u);
  EXPECT_EQ(k.grid_x[0], 64);
  EXPECT_EQ(k.grid_y[0], 2);
  EXPECT_EQ(k.block_x[0], 128);
  EXPECT_EQ(k.registers_per_thread[0], 32);
  EXPECT_EQ(k.dynamic_smem_bytes[0], 4096);
  EXPECT_EQ(k.graph_id[0], 5);
  EXPECT_EQ(k.graph_node_id[0], 55);
  EXPECT_EQ(k.external_id[0], 7);
  EXPECT_EQ(t->strings.get(k.short_name[0]), "gemv");

  const auto& a = t->api_calls;
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a.start_ns[0], base + 11250);
  EXPECT_EQ(a.end_ns[0], base + 13251);
  EXPECT_EQ(a.global_tid[0], process | 4243);
  EXPECT_EQ(t->strings.get(a.name[0]), "cudaLaunchKernel");

  ASSERT_EQ(t->memcpys.size(), 1u);
  EXPECT_EQ(t->memcpys.copy_kind[0], 1);
  EXPECT_EQ(t->memory_kind_labels.at(t->memcpys.src_kind[0]), "Pageable");
  EXPECT_EQ(t->memory_kind_labels.at(t->memcpys.dst_kind[0]), "Device");
  EXPECT_EQ(t->memcpys.bytes[0], 4096);
  ASSERT_EQ(t->memsets.size(), 1u);
  EXPECT_EQ(t->memory_kind_labels.at(t->memsets.mem_kind[0]), "Device");
  ASSERT_EQ(t->syncs.size(), 1u);
  EXPECT_EQ(t->syncs.sync_type[0], 2);
  EXPECT_EQ(t->syncs.event_id[0], 17);

  // Ranges: cpu_op, a Python function, user annotation, GPU annotation, plus three domain-name rows
  // per process.
  const auto& n = t->nvtx;
  int cpu_ops = 0, python = 0, annotations = 0, gpu_annotations = 0, domains = 0;
  for (RowIndex i = 0; i < n.size(); ++i) {
    if (n.event_type[i] == kNvtxDomainCreate) {
      ++domains;
      continue;
    }
    if (n.domain_id[i] == kKinetoCpuOpDomain) {
      ++cpu_ops;
      EXPECT_EQ(n.start_ns[i], base + 10000);
      EXPECT_EQ(n.end_ns[i], base + 15500);
    } else if (n.domain_id[i] == kKinetoPythonDomain) {
      ++python;  // "forward": ts 9, dur 1 (us)
      EXPECT_EQ(n.start_ns[i], base + 9000);
      EXPECT_EQ(n.end_ns[i], base + 10000);
      EXPECT_EQ(n.global_tid[i], process | 4243);
    } else if (n.domain_id[i] == kKinetoGpuAnnotationDomain) {
      ++gpu_annotations;
      EXPECT_EQ(pid_of(n.global_tid[i]), 0);
      EXPECT_EQ(tid_of(n.global_tid[i]), 7);
      EXPECT_NE(n.global_tid[i] & kDeviceTrackBit, 0);
    } else {
      ++annotations;
      EXPECT_EQ(n.global_tid[i], process | 4243);
    }
  }
  EXPECT_EQ(cpu_ops, 1);
  EXPECT_EQ(python, 1);
  EXPECT_EQ(annotations, 1);
  EXPECT_EQ(gpu_annotations, 1);
  EXPECT_EQ(domains, 6);
  ASSERT_EQ(t->processes.size(), 1u);
  EXPECT_EQ(t->processes[0].name, "python3");
  ASSERT_EQ(t->threads.size(), 1u);
  EXPECT_EQ(t->threads[0].name, "main");
  // Every event of the trace is mapped: no note of events left out.
  for (const auto& note : t->notes) EXPECT_EQ(note.text.find("python_function"), std::string::npos) << note.text;
}

TEST(KinetoReader, OldTracesWithAbsoluteMicrosecondsAndStringIds) {
  auto t = read(R"({"traceEvents": [
    {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": "Spans", "tid": "PyTorch Profiler",
     "ts": 1661938466265584, "dur": 5, "args": {"correlation": 1}},
    {"ph": "X", "cat": "Kernel", "name": "k", "pid": 0, "tid": "stream 7", "ts": 1661938466265590, "dur": 2,
     "args": {"device": 0, "stream": 7, "correlation": 1}}]})");
  ASSERT_TRUE(t.has_value()) << t.error().message;
  ASSERT_EQ(t->kernels.size(), 1u);
  EXPECT_EQ(t->kernels.start_ns[0], 1661938466265590000);
  EXPECT_EQ(t->kernels.global_pid[0], process_key(t->api_calls.global_tid[0]));
}

// A range's args.domain (kernscope export writes it for NVTX ranges outside the default domain,
// e.g. nsys's "GIL Trace") is read back as that domain; PyTorch's own ranges, without it, stay in
// the default domain. Fails with the reader ignoring args.domain: both ranges come back as
// ":Holding GIL" / ":step".
TEST(KinetoReader, RangesKeepTheNvtxDomainTheirArgsName) {
  auto t = read(R"({"traceEvents": [
    {"ph": "X", "cat": "user_annotation", "name": "Holding GIL", "pid": 5, "tid": 5, "ts": 10, "dur": 5,
     "args": {"source": "nvtx", "domain": "GIL Trace"}},
    {"ph": "X", "cat": "user_annotation", "name": "Holding GIL", "pid": 5, "tid": 6, "ts": 12, "dur": 1,
     "args": {"domain": "GIL Trace"}},
    {"ph": "X", "cat": "user_annotation", "name": "step", "pid": 5, "tid": 5, "ts": 20, "dur": 5, "args": {}},
    {"ph": "X", "cat": "user_annotation", "name": "other", "pid": 5, "tid": 5, "ts": 30, "dur": 1,
     "args": {"domain": "Another"}}]})");
  ASSERT_TRUE(t.has_value()) << t.error().message;
  const NvtxDomainNames domains(*t);
  std::multiset<std::string> labels;
  for (RowIndex i = 0; i < t->nvtx.size(); ++i) {
    if (is_nvtx_range(t->nvtx.event_type[i])) labels.insert(domains.range_label(*t, i));
  }
  EXPECT_EQ(labels, (std::multiset<std::string>{"GIL Trace:Holding GIL", "GIL Trace:Holding GIL", ":step", "Another:other"}));
}

// AMD (roctracer) and some CUDA Kineto traces keep kernel names mangled. Expected names are what
// nsys wrote for the same manglings (tests/fixtures/demangle/nsys_pairs.tsv: demangledName and
// shortName read with sqlite3 from its exports); the JSON's own spelling stays as the mangled name.
TEST(KinetoReader, MangledKernelNamesAreDemangledAsNsysWritesThem) {
  auto t = read(R"json({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "_Z22ncclDevKernel_SendRecv24ncclDevKernelArgsStorageILm4096EE",
     "pid": 0, "tid": 7, "ts": 1, "dur": 1, "args": {"device": 0, "stream": 7, "correlation": 1}},
    {"ph": "X", "cat": "kernel", "name": "_ZN4demo11tmpl_kernelIfLi128ELb1EEEvPT_PKS1_i",
     "pid": 0, "tid": 7, "ts": 3, "dur": 1, "args": {"device": 0, "stream": 7, "correlation": 2}},
    {"ph": "X", "cat": "kernel", "name": "void gemv<float>(float*, int)",
     "pid": 0, "tid": 7, "ts": 5, "dur": 1, "args": {"device": 0, "stream": 7, "correlation": 3}}]})json");
  ASSERT_TRUE(t.has_value()) << t.error().message;
  const auto& k = t->kernels;
  ASSERT_EQ(k.size(), 3u);
  auto name = [&](StringId id) { return std::string(t->strings.get(id)); };
  EXPECT_EQ(name(k.demangled_name[0]), "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<(unsigned long)4096>)");
  EXPECT_EQ(name(k.short_name[0]), "ncclDevKernel_SendRecv");
  EXPECT_EQ(name(k.mangled_name[0]), "_Z22ncclDevKernel_SendRecv24ncclDevKernelArgsStorageILm4096EE");
  EXPECT_EQ(name(k.demangled_name[1]), "void demo::tmpl_kernel<float, (int)128, (bool)1>(T1 *, const T1 *, int)");
  EXPECT_EQ(name(k.short_name[1]), "tmpl_kernel");
  // A name Kineto already wrote demangled has no mangled form.
  EXPECT_EQ(name(k.demangled_name[2]), "void gemv<float>(float*, int)");
  EXPECT_EQ(k.mangled_name[2], kNoString);
  EXPECT_TRUE(t->has_mangled_names);
}

TEST(KinetoReader, RepairsAndTruncationAreReported) {
  const std::string cut = "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"say \"hi\"\", \"pid\": 1, "
                          "\"tid\": 1, \"ts\": 1, \"dur\": 1,}, {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 3";
  // Cut short: an error unless asked to read what is there (a broken copy must not pass for a trace).
  auto refused = read(cut);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message.find("cut short"), std::string::npos) << refused.error().message;
  auto t = read(cut, true);
  ASSERT_TRUE(t.has_value()) << t.error().message;
  EXPECT_TRUE(t->cut_short.has_value());
  std::string notes;
  for (const auto& n : t->notes) notes += n.text + "\n";
  EXPECT_NE(notes.find("cut short"), std::string::npos) << notes;
  EXPECT_NE(notes.find("repaired invalid JSON: 1 events"), std::string::npos) << notes;
  EXPECT_NE(notes.find("2 unescaped quotes"), std::string::npos) << notes;
  EXPECT_EQ(t->kernels.size(), 0u);
}

// Notes are typed: kind, severity and count, counted by kind as Perfetto's stats table does. The
// input holds, by construction, one kernel with a time, three events without a usable "ts" (none, a
// string, a negative "dur") and a trace cut short inside an event of 24 bytes.
TEST(KinetoReader, NotesHaveKindsSeveritiesAndCounts) {
  const std::string partial_event = R"({"ph": "X", "ts": 9, "du)";
  const std::string json = R"json({"traceEvents": [
  {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1, "args": {"correlation": 1}},
  {"ph": "X", "cat": "kernel", "name": "no_ts", "pid": 0, "tid": 7, "dur": 1},
  {"ph": "X", "cat": "kernel", "name": "text_ts", "pid": 0, "tid": 7, "ts": "soon", "dur": 1},
  {"ph": "X", "cat": "kernel", "name": "negative", "pid": 0, "tid": 7, "ts": 5, "dur": -2},
  )json" + partial_event;
  auto t = read(json, true);
  ASSERT_TRUE(t.has_value()) << t.error().message;
  EXPECT_EQ(t->kernels.size(), 1u);
  const Note* skipped = nullptr;
  const Note* cut = nullptr;
  for (const auto& n : t->notes) {
    if (n.kind == "events_without_time") skipped = &n;
    if (n.kind == "cut_short") cut = &n;
  }
  ASSERT_NE(skipped, nullptr);
  EXPECT_EQ(skipped->severity, NoteSeverity::kDataLoss);
  EXPECT_EQ(skipped->count, 3);
  ASSERT_NE(cut, nullptr);
  EXPECT_EQ(cut->severity, NoteSeverity::kDataLoss);
  EXPECT_EQ(cut->count, static_cast<std::int64_t>(partial_event.size()));  // the bytes of the incomplete event
  EXPECT_TRUE(t->has_note("kineto_source"));
  // Counted by kind: data losses before what the source merely lacks; each kind once.
  const auto counts = count_notes(t->notes);
  ASSERT_GE(counts.size(), 3u);
  EXPECT_EQ(counts[0].severity, NoteSeverity::kDataLoss);
  EXPECT_EQ(counts[1].severity, NoteSeverity::kDataLoss);
  EXPECT_EQ(counts.back().severity, NoteSeverity::kInfo);
  for (std::size_t i = 0; i < counts.size(); ++i) {
    for (std::size_t j = i + 1; j < counts.size(); ++j) EXPECT_NE(counts[i].kind, counts[j].kind);
  }
  // Two notes of one kind add up.
  std::vector<Note> twice = {{"gc_dropped", NoteSeverity::kDataLoss, "a", 2}, {"gc_dropped", NoteSeverity::kDataLoss, "b", 5}};
  const auto summed = count_notes(twice);
  ASSERT_EQ(summed.size(), 1u);
  EXPECT_EQ(summed[0].notes, 2);
  EXPECT_EQ(summed[0].count, 7);
}

TEST(KinetoReader, UnrepairableEventIsAnErrorWithItsOffset) {
  auto t = read("{\"traceEvents\": [{\"ph\": \"X\"}, {\"ph\": \"X\", \"ts\": [}]}");
  ASSERT_FALSE(t.has_value());
  EXPECT_EQ(t.error().code, ErrorCode::kBadInput);
  EXPECT_NE(t.error().message.find("at byte 30"), std::string::npos) << t.error().message;
  auto u = read("{\"schemaVersion\": 1}");
  ASSERT_FALSE(u.has_value());
  EXPECT_NE(u.error().message.find("traceEvents"), std::string::npos);
}

Result<Trace> read(const std::string& json, bool partial);

TEST(KinetoReader, RejectsWhatIsNotATrace) {
  for (const char* bad : {"", "   ", "42", "{\"a\" 1}", "{\"traceEvents\": 5}", "{\"a\": 1}}", "{1: 2}",
                          "{\"traceEvents\": [1, 2]}", "{\"traceEvents\": [{\"ph\": \"X\"}]} x"}) {
    auto t = read(bad);
    ASSERT_FALSE(t.has_value()) << "accepted: " << bad;
    EXPECT_EQ(t.error().code, ErrorCode::kBadInput);
    EXPECT_EQ(t.error().message.find('\n'), std::string::npos);
  }
}

TEST(KinetoReader, HugeStringsStayWithinTheElementLimit) {
  std::string big(3u << 20, 'x');
  auto t = read("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"" + big +
                "\", \"ts\": 1, \"dur\": 1, \"args\": {\"correlation\": 1}}]}");
  ASSERT_TRUE(t.has_value()) << t.error().message;
  ASSERT_EQ(t->kernels.size(), 1u);
  EXPECT_EQ(t->strings.get(t->kernels.demangled_name[0]).size(), big.size());
}

}  // namespace
}  // namespace kernscope
