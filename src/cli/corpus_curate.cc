// `kvault corpus dedup | decontaminate | qa` (docs/corpus.md): the curation of the
// vault, over the algorithms of src/corpus (dedup.h, decontam.h, qa_mine.h).
#include "cli/corpus_curate.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

#include "cli/commands.h"
#include "corpus/corpus_store.h"
#include "corpus/decontam.h"
#include "corpus/dedup.h"
#include "corpus/qa_mine.h"
#include "llm/openai_client.h"
#include "util/json.h"

namespace kvault::cli {
namespace {

using corpus::CorpusStore;
using corpus::KernelRecord;

int Fail(const char* command, const std::string& why, int code) {
  std::cerr << "kvault corpus " << command << ": " << why << "\n";
  return code;
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

void AddCommon(CLI::App* cmd, CorpusCurateFlags& f) {
  cmd->add_option("--vault", f.vault, "the vault file (Default: vault.db)");
  cmd->add_flag("--json", f.json, "print the report as JSON");
}

void AddDedup(CLI::App* corpus, CorpusCurateFlags& f) {
  auto* cmd = f.dedup_cmd = corpus->add_subcommand(
      "dedup", "mark exact and near duplicate kernels, keeping the best-verified of each cluster");
  AddCommon(cmd, f);
  cmd->add_option("--threshold", f.threshold, "estimated Jaccard of a near duplicate (Default: 0.8)")
      ->check(CLI::Range(0.01, 0.99));
  cmd->add_option("--num-perm", f.num_perm, "MinHash slots (Default: 128)")->check(CLI::Range(8, 1024));
  cmd->add_option("--shingle", f.shingle, "tokens per shingle (Default: 5)")->check(CLI::Range(1, 64));
  cmd->add_option("--threads", f.threads, "worker threads (Default: 0, one per core)");
  cmd->add_flag("--exact-only", f.exact_only, "normalised-source duplicates only");
  cmd->add_flag("--dry-run", f.dry_run, "report, store no marks");
  cmd->add_option("--dump-tokens", f.dump_tokens, "write `id<TAB>normalised tokens` per record to FILE");
  cmd->add_option("--marks", f.marks_out, "write the duplicate marks as JSON Lines to FILE");
}

void AddDecontaminate(CLI::App* corpus, CorpusCurateFlags& f) {
  auto* cmd = f.decontaminate_cmd = corpus->add_subcommand(
      "decontaminate", "mark kernels that overlap a benchmark suite (n-grams, operation signature)");
  AddCommon(cmd, f);
  cmd->add_option("--suite", f.suite, "the benchmark's folder (any layout; every source file in it)")
      ->required();
  cmd->add_option("--name", f.suite_name, "the benchmark's name in marks and reports (Default: the folder's name)");
  cmd->add_option("--ngram", f.ngram, "tokens per n-gram (Default: 13)")->check(CLI::Range(3, 200));
  cmd->add_option("--min-overlap", f.min_overlap,
                  "share of a task's distinctive n-grams for an overlap (Default: 0.5)")
      ->check(CLI::Range(0.01, 1.0));
  cmd->add_option("--max-task-share", f.max_task_share,
                  "n-grams in more of the tasks than this are boilerplate (Default: 0.05)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_flag("--no-signature", f.no_signature, "n-gram overlap only");
  cmd->add_option("--threads", f.threads, "worker threads (Default: 0, one per core)");
  cmd->add_flag("--dry-run", f.dry_run, "report, store no marks");
}

void AddQa(CLI::App* corpus, CorpusCurateFlags& f) {
  auto* cmd = f.qa_cmd = corpus->add_subcommand(
      "qa", "mine grounded question-answer pairs from library sources with an LLM");
  AddCommon(cmd, f);
  cmd->add_option("--source-tree", f.source_tree, "the library's source folder")->required();
  cmd->add_option("--endpoint", f.endpoint, "OpenAI-compatible server (docs/llm-servers.md)")->required();
  cmd->add_option("--model", f.model, "model name")->required();
  cmd->add_option("--api-key-env", f.api_key_env, "environment variable holding the API key");
  cmd->add_option("--license", f.license, "the library's licence, kept in each record");
  cmd->add_option("--source", f.source, "provenance of the tree, e.g. a URL (Default: its path)");
  cmd->add_option("--progress", f.progress, "resume file (Default: <vault>.qa-progress.jsonl)");
  cmd->add_option("--max-pairs", f.max_pairs, "pairs asked per chunk (Default: 4)")->check(CLI::Range(1, 20));
  cmd->add_option("--max-lines", f.max_lines, "lines per chunk at most (Default: 80)")->check(CLI::Range(5, 2000));
  cmd->add_option("--timeout", f.timeout_s, "seconds per LLM call (Default: 600)");
  cmd->add_option("--retries", f.retries, "retries per LLM call (Default: 2)");
  cmd->add_option("--temperature", f.temperature, "sampling temperature (Default: the server's)");
  cmd->add_option("--max-tokens", f.max_tokens, "completion tokens at most (Default: the server's)");
}

// ---- dedup ----

Result<std::vector<corpus::DedupItem>> DedupItems(CorpusStore& store) {
  std::vector<corpus::DedupItem> items;
  corpus::RecordFilter filter;
  filter.kind = corpus::kKindKernel;
  Status s = store.ForEach(filter, [&](const KernelRecord& r) {
    items.push_back({r.id, r.candidate_source, r.language, corpus::RankOf(r), corpus::DedupGroupOf(r)});
    return true;
  });
  if (!s) return Error{s.error()};
  return items;
}

Status WriteDumps(const CorpusCurateFlags& f, const std::vector<corpus::DedupItem>& items,
                  const std::vector<corpus::DuplicateMark>& marks) {
  if (!f.dump_tokens.empty()) {
    std::ofstream out(f.dump_tokens);
    for (const auto& item : items) out << item.id << '\t' << corpus::NormalizedLine(item) << '\n';
    if (!out) return Error{"cannot write " + f.dump_tokens};
  }
  if (!f.marks_out.empty()) {
    std::ofstream out(f.marks_out);
    for (const auto& m : marks)
      out << DumpJson(Json{{"record", m.record_id}, {"duplicate_of", m.duplicate_of}, {"kind", m.kind}}) << '\n';
    if (!out) return Error{"cannot write " + f.marks_out};
  }
  return {};
}

Json DedupJson(const corpus::DedupStats& s, double load_s, double store_s) {
  return Json{{"records", s.items},
              {"exact_duplicates", s.exact_duplicates},
              {"near_duplicates", s.near_duplicates},
              {"near_misses", s.near_misses},
              {"cross_group_pairs", s.cross_group_pairs},
              {"clusters", s.clusters},
              {"kept", s.items - s.exact_duplicates - s.near_duplicates},
              {"lsh", {{"bands", s.lsh.bands}, {"rows", s.lsh.rows}}},
              {"candidate_pairs", s.candidate_pairs},
              {"verified_pairs", s.verified_pairs},
              {"near_miss_pairs_compared", s.near_miss_pairs_compared},
              {"seconds", {{"load", load_s}, {"signatures", s.normalize_s}, {"lsh", s.lsh_s},
                           {"verify", s.cluster_s}, {"store", store_s}}}};
}

int RunDedup(const CorpusCurateFlags& f) {
  auto store = CorpusStore::Open(f.vault);
  if (!store) return Fail("dedup", store.error(), kExitInfra);
  auto start = std::chrono::steady_clock::now();
  auto items = DedupItems(*store);
  if (!items) return Fail("dedup", items.error(), kExitInfra);
  double load_s = Seconds(start);
  corpus::DedupOptions options{.threshold = f.threshold, .num_perm = f.num_perm, .shingle = f.shingle,
                               .threads = f.threads, .near = !f.exact_only};
  corpus::DedupResult result = corpus::Deduplicate(*items, options);
  std::vector<corpus::DuplicateMark> marks;
  for (const auto& d : result.duplicates)
    marks.push_back({(*items)[d.item].id, (*items)[d.kept].id, corpus::DuplicateKindName(d.kind)});
  if (Status s = WriteDumps(f, *items, marks); !s) return Fail("dedup", s.error(), kExitInfra);
  start = std::chrono::steady_clock::now();
  if (!f.dry_run)
    if (Status s = store->SetDuplicates(marks); !s) return Fail("dedup", s.error(), kExitInfra);
  Json report = DedupJson(result.stats, load_s, Seconds(start));
  report["stored"] = !f.dry_run;
  if (f.json) {
    std::cout << report.dump() << std::endl;
    return kExitOk;
  }
  const auto& s = result.stats;
  std::printf("%zu kernel record(s): %zu exact and %zu near duplicate(s) in %zu cluster(s); %zu kept, "
              "%zu of them near misses of a passed kernel%s\n",
              s.items, s.exact_duplicates, s.near_duplicates, s.clusters,
              s.items - s.exact_duplicates - s.near_duplicates, s.near_misses,
              f.dry_run ? " (dry run: nothing stored)" : "");
  if (!f.exact_only)
    std::printf("near: threshold %.2f, %d slots, %d-token shingles, LSH %d bands x %d rows, %zu candidate pair(s), %zu verified\n",
                f.threshold, f.num_perm, f.shingle, s.lsh.bands, s.lsh.rows, s.candidate_pairs, s.verified_pairs);
  return kExitOk;
}

// ---- decontaminate ----

std::string SuiteName(const CorpusCurateFlags& f) {
  if (!f.suite_name.empty()) return f.suite_name;
  std::filesystem::path p(f.suite);
  if (!p.has_filename()) p = p.parent_path();
  return p.filename().string();
}

void PrintDecontamTable(const std::string& name, const Json& report) {
  std::printf("suite %s: %d task(s) (%d with an operation signature); %d of %d kernel record(s) overlap\n",
              name.c_str(), report["tasks"].get<int>(), report["tasks_with_signature"].get<int>(),
              report["records_flagged"].get<int>(), report["records_checked"].get<int>());
  for (const auto& [reason, n] : report["by_reason"].items())
    std::printf("  %-10s %d record(s)\n", reason.c_str(), n.get<int>());
  if (report["hits"].empty()) return;
  std::printf("%-16s  %-40s  %-10s  %s\n", "record", "task", "reason", "score");
  size_t shown = 0;
  for (const Json& h : report["hits"]) {
    if (++shown > 50) {
      std::printf("... %zu more (--json lists all)\n", report["hits"].size() - 50);
      break;
    }
    std::printf("%-16s  %-40s  %-10s  %.3f\n", h["record"].get<std::string>().substr(0, 16).c_str(),
                h["task"].get<std::string>().c_str(), h["reason"].get<std::string>().c_str(),
                h["score"].get<double>());
  }
}

int RunDecontaminate(const CorpusCurateFlags& f) {
  auto tasks = corpus::LoadBenchmarkSuite(f.suite);
  if (!tasks) return Fail("decontaminate", tasks.error(), kExitMisuse);
  auto store = CorpusStore::Open(f.vault);
  if (!store) return Fail("decontaminate", store.error(), kExitInfra);
  corpus::DecontamOptions options{.ngram = f.ngram, .min_overlap = f.min_overlap,
                                  .max_task_share = f.max_task_share, .signature = !f.no_signature};
  corpus::SuiteIndex index(*tasks, options);
  std::vector<corpus::DecontamItem> items;
  corpus::RecordFilter filter;
  filter.kind = corpus::kKindKernel;
  Status read = store->ForEach(filter, [&](const KernelRecord& r) {
    items.push_back({r.id, r.candidate_source, r.language, r.task.reference_source});
    return true;
  });
  if (!read) return Fail("decontaminate", read.error(), kExitInfra);
  std::vector<corpus::ContaminationHit> hits = corpus::Decontaminate(items, index, f.threads);

  std::string name = SuiteName(f);
  std::vector<corpus::ContaminationMark> marks;
  std::set<size_t> flagged;
  std::map<std::string, std::set<size_t>> by_reason;
  Json report{{"suite", name}, {"folder", f.suite}, {"tasks", tasks->size()}, {"hits", Json::array()}};
  int with_signature = 0;
  for (size_t t = 0; t < tasks->size(); ++t) with_signature += index.has_signature(t);
  for (const auto& h : hits) {
    const std::string& task = (*tasks)[h.task].name;
    marks.push_back({items[h.item].id, task, h.reason, h.score});
    flagged.insert(h.item);
    by_reason[h.reason].insert(h.item);
    report["hits"].push_back({{"record", items[h.item].id}, {"task", task}, {"reason", h.reason}, {"score", h.score}});
  }
  report["tasks_with_signature"] = with_signature;
  report["records_checked"] = items.size();
  report["records_flagged"] = flagged.size();
  report["by_reason"] = Json::object();
  for (const auto& [reason, ids] : by_reason) report["by_reason"][reason] = ids.size();
  if (!f.dry_run)
    if (Status s = store->SetContamination(marks, name); !s) return Fail("decontaminate", s.error(), kExitInfra);
  report["stored"] = !f.dry_run;
  if (f.json) std::cout << report.dump() << std::endl;
  else PrintDecontamTable(name, report);
  return kExitOk;
}

// ---- qa ----

Result<std::set<std::string>> KnownQuestions(CorpusStore& store) {
  std::set<std::string> known;
  corpus::RecordFilter filter;
  filter.kind = corpus::kKindQa;
  Status s = store.ForEach(filter, [&](const KernelRecord& r) {
    known.insert(corpus::NormalizedQuestion(r.qa.question));
    return true;
  });
  if (!s) return Error{s.error()};
  return known;
}

void PrintQaReport(const corpus::QaMineReport& r, const std::string& progress) {
  std::printf("%d chunk(s): %d asked, %d already done, %d unparseable answer(s) (asked again next run)\n",
              r.chunks, r.asked, r.skipped_done, r.unparseable);
  std::printf("%d pair(s) proposed: %d kept, %d duplicate(s), %d malformed", r.proposed, r.kept, r.duplicates,
              r.malformed);
  for (const auto& [reason, n] : r.dropped) std::printf(", %d %s", n, reason.c_str());
  std::printf("\nprogress: %s\n", progress.c_str());
}

int RunQa(const CorpusCurateFlags& f) {
  auto chunks = corpus::ChunkTree(f.source_tree, corpus::ChunkOptions{.max_lines = f.max_lines});
  if (!chunks) return Fail("qa", chunks.error(), kExitMisuse);
  llm::ClientSettings settings;
  settings.endpoint = f.endpoint;
  settings.api_key_env = f.api_key_env;
  settings.request_timeout_s = f.timeout_s;
  settings.connect_timeout_s = std::min(10.0, f.timeout_s);
  settings.max_retries = f.retries;
  if (Status ok = llm::CheckOpenAiSettings(settings); !ok) return Fail("qa", ok.error(), kExitMisuse);
  auto store = CorpusStore::Open(f.vault);
  if (!store) return Fail("qa", store.error(), kExitInfra);
  auto known = KnownQuestions(*store);
  if (!known) return Fail("qa", known.error(), kExitInfra);
  auto progress = corpus::QaProgress::Open(f.progress.empty() ? f.vault + ".qa-progress.jsonl" : f.progress);
  if (!progress) return Fail("qa", progress.error(), kExitInfra);

  auto client = llm::MakeOpenAiClient(settings);
  auto checker = corpus::MakeGxxChecker();
  corpus::QaMiner miner(*client, *checker,
                        {.model = f.model, .source = f.source.empty() ? f.source_tree : f.source,
                         .license = f.license, .max_pairs = f.max_pairs, .temperature = f.temperature,
                         .max_tokens = f.max_tokens});
  corpus::QaMineReport report;
  Status run = miner.Run(*chunks, *progress, *known,
                         [&](const std::vector<KernelRecord>& rs) { return store->UpsertMany(rs); }, &report);
  if (f.json) {
    Json j = report.ToJson();
    j["progress"] = progress->path();
    if (!run) j["error"] = run.error();
    std::cout << j.dump() << std::endl;
  } else {
    PrintQaReport(report, progress->path());
  }
  if (!run) return Fail("qa", run.error() + " (pairs kept so far are stored; run the same command to continue)", kExitInfra);
  return kExitOk;
}

}  // namespace

void AddCorpusCurateCommands(CLI::App* corpus, CorpusCurateFlags& flags) {
  AddDedup(corpus, flags);
  AddDecontaminate(corpus, flags);
  AddQa(corpus, flags);
}

std::optional<int> RunCorpusCurate(const CorpusCurateFlags& flags) {
  if (flags.dedup_cmd && flags.dedup_cmd->parsed()) return RunDedup(flags);
  if (flags.decontaminate_cmd && flags.decontaminate_cmd->parsed()) return RunDecontaminate(flags);
  if (flags.qa_cmd && flags.qa_cmd->parsed()) return RunQa(flags);
  return std::nullopt;
}

}  // namespace kvault::cli
