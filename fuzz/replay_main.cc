// Runs one fuzz target without libFuzzer, for builds with g++ and no sanitizer runtime
// (docs/fuzzing.md, "Seed replay"): every input file under the given paths, then
// --mutations N deterministic mutations of each (bit flips, truncations, inserted,
// repeated and overwritten bytes, splices with another input), all from a fixed seed,
// so a failure reproduces. A crash ends the process as it would under libFuzzer; the
// input that was running is written to ./crash-replay first (from the signal handler,
// with write(2) only), so it can be replayed alone.
//
//   fuzz_store_replay [--mutations N] [--seed S] PATH...
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

// The input being run, for the crash handler.
const uint8_t* g_current = nullptr;
size_t g_current_size = 0;

void WriteCurrentInputAndDie(int sig) {
  int fd = open("crash-replay", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    size_t done = 0;
    while (done < g_current_size) {
      ssize_t n = write(fd, g_current + done, g_current_size - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    close(fd);
  }
  static const char msg[] = "fuzz replay: crashed; the input is in ./crash-replay\n";
  (void)!write(2, msg, sizeof msg - 1);
  signal(sig, SIG_DFL);
  raise(sig);
}

void InstallCrashHandlers() {
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP}) signal(sig, WriteCurrentInputAndDie);
}

void Run(const std::vector<uint8_t>& input) {
  g_current = input.data();
  g_current_size = input.size();
  LLVMFuzzerTestOneInput(input.data(), input.size());
}

// splitmix64: small, fast, the same sequence everywhere.
struct Rng {
  uint64_t state;
  uint64_t Next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  size_t Below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(Next() % n); }
};

// Bytes that often change a parser's path: boundaries and format characters.
constexpr uint8_t kInteresting[] = {0x00, 0x01, 0x7F, 0x80, 0xFF, '"', '\\', '{', '}', '[', ']',
                                    ',', ':', '\n', '0', '9', '-', 'e', '.', ' '};

std::vector<uint8_t> Mutate(const std::vector<uint8_t>& seed, const std::vector<uint8_t>& other, Rng& rng) {
  std::vector<uint8_t> out = seed;
  int steps = 1 + static_cast<int>(rng.Below(4));
  for (int s = 0; s < steps; ++s) {
    switch (rng.Below(7)) {
      case 0:  // flip a bit
        if (!out.empty()) out[rng.Below(out.size())] ^= static_cast<uint8_t>(1u << rng.Below(8));
        break;
      case 1:  // truncate
        out.resize(rng.Below(out.size() + 1));
        break;
      case 2:  // insert an interesting byte
        out.insert(out.begin() + static_cast<long>(rng.Below(out.size() + 1)),
                   kInteresting[rng.Below(sizeof kInteresting)]);
        break;
      case 3:  // overwrite with an interesting byte
        if (!out.empty()) out[rng.Below(out.size())] = kInteresting[rng.Below(sizeof kInteresting)];
        break;
      case 4: {  // repeat a chunk
        if (out.empty() || out.size() > (1u << 16)) break;
        size_t at = rng.Below(out.size()), len = 1 + rng.Below(std::min<size_t>(64, out.size() - at));
        std::vector<uint8_t> chunk(out.begin() + static_cast<long>(at), out.begin() + static_cast<long>(at + len));
        out.insert(out.begin() + static_cast<long>(at), chunk.begin(), chunk.end());
        break;
      }
      case 5: {  // erase a chunk
        if (out.empty()) break;
        size_t at = rng.Below(out.size()), len = 1 + rng.Below(std::min<size_t>(64, out.size() - at));
        out.erase(out.begin() + static_cast<long>(at), out.begin() + static_cast<long>(at + len));
        break;
      }
      default: {  // splice: this input's head, another's tail
        size_t head = rng.Below(out.size() + 1), tail = rng.Below(other.size() + 1);
        out.resize(head);
        out.insert(out.end(), other.begin() + static_cast<long>(tail), other.end());
        break;
      }
    }
  }
  return out;
}

bool ReadInputs(const std::filesystem::path& p, std::vector<std::vector<uint8_t>>& inputs) {
  std::error_code ec;
  if (std::filesystem::is_directory(p, ec)) {
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::recursive_directory_iterator(p, ec))
      if (e.is_regular_file()) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files)
      if (!ReadInputs(f, inputs)) return false;
    return true;
  }
  std::ifstream in(p, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "fuzz replay: cannot read %s\n", p.c_str());
    return false;
  }
  inputs.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  long mutations = 0;
  uint64_t seed = 1;
  std::vector<std::vector<uint8_t>> inputs;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--mutations" && i + 1 < argc) {
      mutations = std::strtol(argv[++i], nullptr, 10);
    } else if (a == "--seed" && i + 1 < argc) {
      seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (!ReadInputs(a, inputs)) {
      return 2;
    }
  }
  if (inputs.empty()) {
    std::fprintf(stderr, "usage: %s [--mutations N] [--seed S] PATH...  (no inputs found)\n", argv[0]);
    return 2;
  }
  InstallCrashHandlers();
  for (const auto& input : inputs) Run(input);
  Rng rng{seed};
  for (long m = 0; m < mutations; ++m) {
    const auto& base = inputs[static_cast<size_t>(m) % inputs.size()];
    Run(Mutate(base, inputs[rng.Below(inputs.size())], rng));
  }
  std::printf("fuzz replay: %zu inputs and %ld mutations ran\n", inputs.size(), mutations);
  return 0;
}
