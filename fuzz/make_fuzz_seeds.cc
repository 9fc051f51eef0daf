// Writes the binary seed inputs of the fuzz targets (valid tensor files, pairs of
// them for fuzz_compare, a small store) into <corpus>/<target>/. Run after a format
// change:  build-fuzz/fuzz/make_fuzz_seeds fuzz/corpus
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "check/testing/tensor_file_writer.h"
#include "store/store.h"
#include "util/files.h"

namespace kvault {
namespace {
namespace t = testing;

std::vector<std::pair<std::string, std::string>> TensorSeeds() {
  std::vector<std::pair<std::string, std::string>> out;
  {  // the documented example: a tuple of a tensor and an int
    t::TensorFileWriter w;
    Json a = w.Add<float>({2, 3}, {1, 2, 3, 4, 5, 6});
    w.SetTree(t::TupleNode({a, t::IntNode(3)}));
    out.push_back({"tuple_f32_int", w.Bytes()});
  }
  {  // every dtype in a dict
    t::TensorFileWriter w;
    Json f64 = w.Add<double>({2}, {1.5, -2.25});
    Json f16 = w.AddHalf({2, 2}, {0.5f, -1.0f, 65504.0f, 1e-7f});
    Json bf16 = w.AddBFloat16({3}, {1.0f, -0.0f, 3.5f});
    Json i64 = w.Add<int64_t>({2}, {-1, 1LL << 40});
    Json i32 = w.Add<int32_t>({1}, {7});
    Json i16 = w.Add<int16_t>({2}, {-3, 3});
    Json i8 = w.Add<int8_t>({2}, {-128, 127});
    Json u8 = w.Add<uint8_t>({2}, {0, 255});
    Json b = w.AddBool({3}, {true, false, true});
    w.SetTree(t::DictNode({{"f64", f64}, {"f16", f16}, {"bf16", bf16}, {"i64", i64}, {"i32", i32},
                           {"i16", i16}, {"i8", i8}, {"u8", u8}, {"b", b}}));
    out.push_back({"dict_all_dtypes", w.Bytes()});
  }
  {  // non-tensor leaves, a 0-d tensor, an empty tensor, non-finite values
    t::TensorFileWriter w;
    const float inf = std::numeric_limits<float>::infinity();
    Json scalar = w.Add<float>({}, {2.0f});
    Json empty = w.Add<float>({0, 4}, {});
    Json special = w.Add<float>({4}, {std::nanf(""), inf, -inf, 0.0f});
    w.SetTree(t::ListNode({scalar, empty, special, t::FloatNode(std::nan("")), t::FloatNode(1.25),
                           t::BoolNode(true), t::NoneNode(), t::StrNode("s"),
                           t::UnsupportedNode("tensor:complex64"),
                           t::TupleNode({t::ListNode({t::IntNode(-5)})})}));
    out.push_back({"list_leaves", w.Bytes()});
  }
  {  // a single tensor at the root, no other nodes
    t::TensorFileWriter w;
    w.SetTree(w.Add<int32_t>({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}));
    out.push_back({"root_tensor", w.Bytes()});
  }
  {  // no tensors
    t::TensorFileWriter w;
    w.SetTree(t::TupleNode({}));
    out.push_back({"empty_tuple", w.Bytes()});
  }
  return out;
}

// fuzz_compare's layout: options byte, u32 length of the reference, reference, candidate.
std::string ComparePair(uint8_t options, const std::string& ref, const std::string& cand) {
  std::string out(1, static_cast<char>(options));
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((ref.size() >> (8 * i)) & 0xff));
  return out + ref + cand;
}

std::vector<std::pair<std::string, std::string>> CompareSeeds(
    const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, bytes] : files) out.push_back({"same_" + name, ComparePair(0, bytes, bytes)});
  t::TensorFileWriter ref, close, far, shape;
  ref.SetTree(t::TupleNode({ref.Add<float>({2, 2}, {1, 2, 3, 4}), t::FloatNode(0.5)}));
  close.SetTree(t::TupleNode({close.Add<float>({2, 2}, {1, 2, 3, 4.00001f}), t::FloatNode(0.5)}));
  far.SetTree(t::TupleNode({far.Add<float>({2, 2}, {1, 2, std::nanf(""), 9}), t::FloatNode(0.7)}));
  shape.SetTree(t::TupleNode({shape.Add<float>({4}, {1, 2, 3, 4}), t::FloatNode(0.5)}));
  out.push_back({"close", ComparePair(0, ref.Bytes(), close.Bytes())});
  out.push_back({"close_exact", ComparePair(2, ref.Bytes(), close.Bytes())});
  out.push_back({"far", ComparePair(0, ref.Bytes(), far.Bytes())});
  out.push_back({"far_forbid_nan", ComparePair(1 | 4, ref.Bytes(), far.Bytes())});
  out.push_back({"shape", ComparePair(0, ref.Bytes(), shape.Bytes())});
  t::TensorFileWriter h1, h2;
  h1.SetTree(t::DictNode({{"a", h1.AddHalf({3}, {1, 2, 3})}, {"b", t::IntNode(1)}}));
  h2.SetTree(t::DictNode({{"b", t::IntNode(1)}, {"a", h2.AddHalf({3}, {1, 2.001f, 3})}}));
  out.push_back({"dict_half", ComparePair(0, h1.Bytes(), h2.Bytes())});
  return out;
}

Status WriteStoreSeed(const std::string& path) {
  std::filesystem::remove(path);
  auto store = Store::Open(path);
  if (!store) return Error{store.error()};
  int n = 0;
  for (const char* run : {"r1", "r2"}) {
    for (const char* task : {"relu", "matmul"}) {
      AttemptRecord r;
      r.run = run;
      r.task = task;
      r.task_hash = std::string(64, 'a');
      r.candidate_hash = std::string(64, static_cast<char>('0' + n++));
      r.candidate_path = std::string("/c/") + task + ".hip";
      r.candidate_source = "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {}";
      r.format = "extension";
      r.language = "hip";
      r.backend = "cpu";
      r.arch = "x86_64";
      r.status = n % 2 ? "passed" : "mismatch";
      r.compiled = true;
      r.correct = n % 2;
      if (n % 2) r.speedup = 1.5;
      r.reference_ms = 2.0;
      r.candidate_ms = 1.0;
      r.reward = 0.5;
      r.message = "ok";
      r.cases = Json::array({Json{{"name", "small"}, {"ms", 1.0}}});
      r.environment = Json{{"gpu", "none"}, {"torch", "2.1"}};
      r.engine_version = "0.1.0";
      r.seconds = 0.25;
      if (Status s = (*store)->Put(r); !s) return s;
    }
  }
  return Status::Ok();  // closing the last connection checkpoints the WAL into the file
}

int Main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_fuzz_seeds CORPUS_DIR\n");
    return 2;
  }
  const std::string root = argv[1];
  auto write_all = [&](const std::string& target, const auto& seeds) {
    std::filesystem::create_directories(root + "/" + target);
    for (const auto& [name, bytes] : seeds) {
      if (Status s = WriteFileAtomic(root + "/" + target + "/" + name, bytes); !s) {
        std::fprintf(stderr, "%s\n", s.error().c_str());
        std::exit(1);
      }
    }
  };
  const auto tensors = TensorSeeds();
  write_all("fuzz_tensor_file", tensors);
  write_all("fuzz_compare", CompareSeeds(tensors));
  std::filesystem::create_directories(root + "/fuzz_store");
  if (Status s = WriteStoreSeed(root + "/fuzz_store/four_records"); !s) {
    std::fprintf(stderr, "%s\n", s.error().c_str());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace kvault

int main(int argc, char** argv) { return kvault::Main(argc, argv); }
