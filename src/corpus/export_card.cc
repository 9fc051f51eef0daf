#include "corpus/export_card.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>
#include <string_view>

namespace kvault::corpus {
namespace {

// Licence ids of the Hub's list (hf.co/docs/hub/repositories-licenses) that are SPDX
// ids in lower case.
constexpr std::string_view kHubLicences[] = {
    "afl-3.0",        "agpl-3.0",       "apache-2.0",      "artistic-2.0",        "bsd-2-clause",
    "bsd-3-clause",   "bsd-3-clause-clear", "bsl-1.0",     "cc-by-2.0",           "cc-by-2.5",
    "cc-by-3.0",      "cc-by-4.0",      "cc-by-nc-2.0",    "cc-by-nc-3.0",        "cc-by-nc-4.0",
    "cc-by-nc-nd-3.0", "cc-by-nc-nd-4.0", "cc-by-nc-sa-2.0", "cc-by-nc-sa-3.0",   "cc-by-nc-sa-4.0",
    "cc-by-nd-4.0",   "cc-by-sa-3.0",   "cc-by-sa-4.0",    "cc0-1.0",             "cdla-permissive-1.0",
    "cdla-permissive-2.0", "cdla-sharing-1.0", "ecl-2.0",  "epl-1.0",             "epl-2.0",
    "eupl-1.1",       "eupl-1.2",       "gpl-2.0",         "gpl-3.0",             "isc",
    "lgpl-2.1",       "lgpl-3.0",       "lppl-1.3c",       "mit",                 "mpl-2.0",
    "ms-pl",          "ncsa",           "odbl",            "odc-by",              "ofl-1.1",
    "osl-3.0",        "pddl",           "postgresql",      "unlicense",           "wtfpl",
    "zlib",
};

std::string Lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// A licence's wording as an id: lower case, each run of other characters one `-`.
std::string AsId(const std::string& license) {
  std::string out;
  for (char c : Lower(license)) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '.')
      out += c;
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "unnamed" : out;
}

// A table cell: one line, no column break.
std::string Cell(const std::string& text, const char* empty = "unknown") {
  if (text.empty()) return empty;
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : c == '\n' || c == '\r' ? std::string(" ") : std::string(1, c);
  return out;
}

std::string CountsLines(const std::map<std::string, int64_t>& m) {
  std::string out;
  for (const auto& [name, n] : m) out += "| " + Cell(name) + " | " + std::to_string(n) + " |\n";
  return out;
}

std::string LicenceTable(const SourceLicences& licences) {
  std::string out = "| source | licence | rows |\n|---|---|---|\n";
  for (const auto& [key, n] : licences)
    out += "| " + Cell(key.first) + " | " + (LicenceStated(key.second) ? Cell(key.second) : "unknown") + " | " +
           std::to_string(n) + " |\n";
  return out;
}

std::string UnstatedNote(int64_t unstated) {
  if (unstated == 0) return "";
  return "\n**" + std::to_string(unstated) +
         " rows come from sources that state no licence** (`unknown` above): their terms are not known, so "
         "they may not be yours to redistribute. Check them, import them again with `--license`, or export "
         "with `--licensed-only` to leave them out.\n";
}

}  // namespace

std::string HubLicenceId(const std::string& license) {
  std::string id = Lower(license);
  if (id.ends_with("-only")) id.resize(id.size() - 5);
  return std::find(std::begin(kHubLicences), std::end(kHubLicences), id) != std::end(kHubLicences) ? id : "";
}

CardLicence CardLicenceOf(const SourceLicences& licences) {
  CardLicence out;
  std::set<std::string> stated;
  for (const auto& [key, n] : licences) {
    if (LicenceStated(key.second))
      stated.insert(key.second);
    else
      out.unstated += n;
  }
  if (stated.empty()) {
    out.license = "unknown";
  } else if (stated.size() == 1 && out.unstated == 0 && !HubLicenceId(*stated.begin()).empty()) {
    out.license = HubLicenceId(*stated.begin());
  } else {
    out.license = "other";
    out.name = stated.size() == 1 && out.unstated == 0 ? AsId(*stated.begin()) : "per-source";
  }
  return out;
}

std::string LicenceFile(const SourceLicences& licences) {
  return "# Licences\n\nEach row keeps the licence its source states (column `license`, as `kvault corpus "
         "import --license` recorded it); this dataset is under the licences of its sources:\n\n" +
         LicenceTable(licences) + UnstatedNote(CardLicenceOf(licences).unstated);
}

std::string DatasetCard(const CorpusStats& s, const ExportOptions& o, const ExportSummary& summary,
                        const SourceLicences& licences) {
  std::map<std::string, int64_t> sources;
  for (const auto& [source, n] : s.by_source) sources[o.publish ? PublicName(source) : source] += n;
  const CardLicence licence = CardLicenceOf(licences);
  std::ostringstream card;
  card << "---\nlicense: " << licence.license << "\n";
  if (licence.license == "other") card << "license_name: " << licence.name << "\nlicense_link: LICENSE.md\n";
  // No `configs:` block: the Hub and `datasets` find the splits by the files' names
  // (data/train-*, data/test-*), and `datasets` then keys its cache on the files
  // themselves; with data_files listed in the card it keys it on those patterns alone,
  // and a folder exported again (or any folder of the same name) loads the rows of the
  // first one it cached.
  card << "tags:\n- gpu-kernels\n- code\n---\n\n# KernelVault corpus export\n\n"
       << summary.rows << " records, each a kernel verified against a PyTorch reference (or a "
       << "question-answer pair), with its provenance and verification results.\n\n"
       << "## Splits\n\n" << summary.rows - summary.test_rows << " rows in `train`, " << summary.test_rows
       << " in `test`. The split is by task family: tasks that share a name, a reference or the shape-free "
       << "operation signature of their references (one operation resized or renamed) are all on one side; a "
       << "family is in `test` when the SHA-256 of its key is below " << o.test_share << " of the range.\n\n"
       << "## Verification\n\n`status` and `speedup` count only results this vault's engine produced "
       << (o.filter.count_claims ? "and, for this export, the verdicts imports claimed" : "(imported verdicts are claims: "
                                                                                          "kept in `results` with origin `import`, never counted)")
       << ". `speedup` is the median over the record's passed results, `speedup_samples` how many.\n\n"
       << "## Prompts\n\n`system_prompt` and `prompt` are the messages `kvault gen` sends for the task "
       << "(prompt templates " << o.prompts.version << ")" << (o.system_prompt ? "" : "; the system prompt was left out")
       << ".\n\n"
       << "## Counts\n\n| kind | records |\n|---|---|\n" << CountsLines(s.by_kind)
       << "\n| language | records |\n|---|---|\n" << CountsLines(s.by_language)
       << "\n| status (best result) | records |\n|---|---|\n" << CountsLines(s.by_status)
       << "\n## Sources\n\n| source | records |\n|---|---|\n" << CountsLines(sources)
       << "\n## Licences\n\nEach row keeps its source's licence (column `license`; LICENSE.md). "
       << (o.filter.licensed_only ? "Records whose source states no licence were left out.\n\n" : "\n\n")
       << LicenceTable(licences) << UnstatedNote(licence.unstated) << "\n## Decontamination\n\n";
  if (s.contamination_by_suite.empty()) {
    card << "No decontamination was run on this vault: no record is marked.\n";
  } else {
    card << "| benchmark suite | records marked in the vault |\n|---|---|\n";
    for (const auto& [suite, n] : s.contamination_by_suite) card << "| " << Cell(suite) << " | " << n << " |\n";
    card << "\n" << (o.filter.decontaminated_only ? "Marked records were left out of this export."
                                                  : "Marked records are included; their `contamination` column says why.")
         << " " << s.contaminated << " exported records carry a mark.\n";
  }
  card << "\n## Duplicates\n\n"
       << (o.filter.include_duplicates ? "Records marked duplicates are included (`duplicate_of`).\n"
                                       : "Records marked duplicates were left out; near misses (wrong kernels close to a "
                                         "correct one, `duplicate_kind` `near_miss`) are kept.\n")
       << "\n## Filters\n\nstatus `" << o.filter.status << "`, hardware `" << o.filter.hardware
       << "`, minimum speedup `" << (o.filter.min_speedup ? std::to_string(*o.filter.min_speedup) : "") << "`, language `"
       << o.filter.language << "`" << (o.publish ? "; published: no paths, command lines or host names" : "")
       << ".\n";
  return card.str();
}

}  // namespace kvault::corpus
