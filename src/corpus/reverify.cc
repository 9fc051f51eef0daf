#include "corpus/reverify.h"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>

#include "engine/candidate_build.h"
#include "toolchain/tools.h"
#include "util/files.h"
#include "util/sha256.h"
#include "util/strings.h"
#include "util/subprocess.h"

namespace kvault::corpus {
namespace {

constexpr const char* kVerifyRun = "corpus-verify";
constexpr auto kToolTimeout = std::chrono::seconds(30);

const char* CompilerOf(std::string_view backend) {
  return backend == "cuda" ? "nvcc" : backend == "hip" ? "hipcc" : "g++";
}

// The candidate file's extension the engine's loader reads the record as; "" for a
// format it cannot run.
std::string ExtensionOf(const KernelRecord& r) {
  if (r.format == "kernelbench" || r.format == "triton") return ".py";
  if (r.format != "extension" && r.format != "native") return "";
  if (r.language == "hip") return ".hip";
  if (r.language == "cuda") return ".cu";
  if (r.language == "cpp") return ".cpp";
  return "";
}

std::string FirstLine(const std::string& text) {
  return std::string(Trim(text.substr(0, text.find('\n'))));
}

// "nvcc 12.4"; a version line that names its tool already is kept as it is.
std::string ToolchainLabel(const char* compiler, const std::string& version) {
  const std::string line = FirstLine(version);
  return line.starts_with(compiler) ? line : std::string(compiler) + " " + line;
}

// A task file name that says which task it is: its name's letters and digits, then
// a prefix of the reference's hash (two references of one name stay apart).
std::string TaskFileName(const KernelRecord& r) {
  std::string name;
  for (char c : r.task.name) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return (name.empty() ? std::string("task") : name.substr(0, 64)) + "_" + r.task.reference_sha256.substr(0, 12);
}

std::string CpuModelName() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.starts_with("model name")) return std::string(Trim(line.substr(line.find(':') + 1)));
  return "cpu";
}

// The files RunBatch reads: one task file per reference, one candidate per record.
struct JobFiles {
  std::vector<EvalJob> jobs;
  std::map<std::string, TaskFile> tasks;  // by reference sha256
};

Status AddJob(const KernelRecord& r, const std::string& dir, JobFiles& files) {
  auto task = files.tasks.find(r.task.reference_sha256);
  if (task == files.tasks.end()) {
    TaskFile t;
    t.name = TaskFileName(r);
    t.path = dir + "/tasks/" + t.name + ".py";
    t.source = r.task.reference_source;
    t.hash = r.task.reference_sha256;
    if (Status s = WriteFileAtomic(t.path, t.source); !s) return s;
    task = files.tasks.emplace(r.task.reference_sha256, std::move(t)).first;
  }
  const std::string path = dir + "/candidates/" + r.id.substr(0, 24) + ExtensionOf(r);
  if (Status s = WriteFileAtomic(path, r.candidate_source); !s) return s;
  files.jobs.push_back({task->second, path, r.id});
  return Status::Ok();
}

}  // namespace

Json ReverifySummary::ToJson() const {
  return {{"selected", selected},   {"already", already},           {"unsupported", unsupported},
          {"verified", verified},   {"not_recorded", not_recorded}, {"hardware", hardware},
          {"toolchain", toolchain}};
}

std::string MachineHardware(const EngineOptions& options) {
  const std::string backend(ToString(options.backend));
  if (backend == "cpu") return CpuModelName();
  CommandSpec cmd;
  if (backend == "cuda")
    cmd.argv = {"nvidia-smi", "--query-gpu=name", "--format=csv,noheader", "--id=" + std::to_string(options.device_index)};
  else
    cmd.argv = {"rocm-smi", "--showproductname", "-d", std::to_string(options.device_index), "--csv"};
  auto r = RunCommand(cmd, kToolTimeout);
  if (r && r->exit_code == 0) {
    // nvidia-smi: the name; rocm-smi --csv: a header, then "card0,<series>,<model>,...".
    std::vector<std::string> lines = Split(std::string(Trim(r->output)), '\n');
    std::string name = backend == "cuda" || lines.size() < 2 ? lines[0] : Split(lines[1], ',').size() > 1 ? Split(lines[1], ',')[1] : lines[1];
    if (!Trim(name).empty()) return std::string(Trim(name));
  }
  return backend + " device " + std::to_string(options.device_index);
}

std::string MachineToolchain(const EngineOptions& options) {
  const char* compiler = CompilerOf(ToString(options.backend));
  for (const ToolInfo& t : DiscoverTools())
    if (t.name == compiler) return t.found ? ToolchainLabel(compiler, t.version) : "";
  return "";
}

VerificationResult ResultFromAttempt(const AttemptRecord& a) {
  VerificationResult v;
  const Json device = a.environment.value("device", Json::object());
  v.hardware = device.is_object() ? device.value("name", std::string()) : std::string();
  if (v.hardware.empty()) v.hardware = a.backend;
  v.backend = a.backend;
  v.status = a.status;
  v.speedup = a.speedup;
  v.reference_ms = a.reference_ms;
  v.candidate_ms = a.candidate_ms;
  v.environment = a.environment;
  v.verified_at = a.created_at;
  const char* compiler = CompilerOf(a.backend);
  const Json tools = a.environment.value("toolchains", Json::object());
  if (tools.is_object() && tools.contains(compiler) && tools[compiler].is_string())
    v.toolchain = ToolchainLabel(compiler, tools[compiler].get<std::string>());
  return v;
}

Result<ReverifySummary> Reverify(CorpusStore& vault, const EngineOptions& options,
                                 const ReverifySettings& settings,
                                 const std::function<void(const EvalProgress&)>& progress) {
  ReverifySummary summary;
  summary.hardware = settings.hardware.empty() ? MachineHardware(options) : settings.hardware;
  summary.toolchain = MachineToolchain(options);
  auto dir = TempDir::Create("", "kvault-corpus-verify");
  if (!dir) return Error{dir.error()};
  for (const char* sub : {"/tasks", "/candidates"})
    if (Status s = EnsureDir(dir->path() + sub); !s) return Error{s.error()};
  RecordFilter filter = settings.filter;
  filter.kind = kKindKernel;
  JobFiles files;
  Status write_error = Status::Ok();
  Status s = vault.ForEach(filter, [&](const KernelRecord& r) {
    ++summary.selected;
    // A record in a language this backend cannot build is not verified here: run on
    // it, a CUDA file would become its own compile_error on a cpu machine.
    if (r.task.reference_source.empty() || ExtensionOf(r).empty() ||
        !BackendMismatch(r.language, options.backend).empty()) {
      ++summary.unsupported;
      return true;
    }
    bool has = false;  // an import's claim of this hardware is no reason to skip
    for (const VerificationResult& v : r.results)
      has |= v.origin == kOriginEngine && v.hardware == summary.hardware && v.toolchain == summary.toolchain;
    if (has && !settings.force) {
      ++summary.already;
      return true;
    }
    write_error = AddJob(r, dir->path(), files);
    return write_error.ok();
  });
  if (!s) return Error{s.error()};
  if (!write_error) return Error{write_error.error()};
  if (files.jobs.empty()) return summary;

  const std::string scratch = settings.scratch_db.empty() ? vault.path() + ".verify.db" : settings.scratch_db;
  auto store = Store::Open(scratch);
  if (!store) return Error{store.error()};
  EvalSettings eval;
  // One run per hardware and toolchain: the scratch store resumes an interrupted
  // verification, never answers for another machine (a copied vault, --as-hardware).
  eval.run = std::string(kVerifyRun) + "-" + Sha256Hex(summary.hardware + '\n' + summary.toolchain).substr(0, 12);
  eval.jobs = settings.jobs;
  eval.compile_jobs = settings.compile_jobs;
  eval.force = settings.force;
  eval.stop = settings.stop;
  std::mutex mu;  // the vault is used by one thread at a time; lanes report concurrently
  int64_t foreign = 0;
  Status add_error = Status::Ok();
  auto record = [&](const EvalProgress& p) {
    std::lock_guard<std::mutex> lock(mu);
    if (p.last && !p.last->run.empty()) {
      if (p.last->status == "task_error" || p.last->status == "infra_error") {
        ++summary.not_recorded;
      } else if (!ForeignLanguageOf(p.last->environment).empty()) {
        ++summary.unsupported;  // a KernelBench file whose load_inline builds CUDA, on cpu
        ++foreign;
      } else {
        VerificationResult v = ResultFromAttempt(*p.last);
        v.hardware = summary.hardware;
        v.toolchain = summary.toolchain;
        v.origin = kOriginEngine;
        Status st = vault.AddResult(p.last->sample, v);
        if (st.ok()) ++summary.verified;
        else if (add_error.ok()) add_error = st;
      }
    }
    if (progress) progress(p);
  };
  // Imported tasks are anyone's code: each runs in a reference worker of its own
  // (docs/threat-model.md), never in the one that times another task's reference.
  EngineOptions per_task = options;
  per_task.reference_workers = ReferenceWorkers::kPerTask;
  auto attempts = RunBatch(files.jobs, per_task, eval, **store, record);
  if (!add_error) return Error{add_error.error()};
  if (!attempts) return Error{attempts.error()};
  const int64_t reported = summary.verified + summary.not_recorded + foreign;
  summary.not_recorded += static_cast<int64_t>(files.jobs.size()) - reported;
  return summary;
}

}  // namespace kvault::corpus
