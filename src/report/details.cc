// The report's sections that say why candidates failed and where each run ran.
#include <algorithm>
#include <sstream>

#include "report/report.h"
#include "report/svg.h"

namespace kvault::report {
namespace {

std::string FirstLine(const std::string& s, size_t max) {
  std::string line = s.substr(0, s.find('\n'));
  return line.size() > max ? line.substr(0, max - 3) + "..." : line;
}

std::string Text(const Json& j, const char* key) {
  if (!j.is_object()) return "";
  const Json& v = j.value(key, Json());
  return v.is_string() ? v.get<std::string>() : "";
}

}  // namespace

std::string FailureMessage(const AttemptRecord& r, size_t max) {
  if (r.status == "passed") return "";
  return FirstLine(r.message, max);
}

std::string FailureTable(const std::vector<ReportRun>& runs, size_t max_rows) {
  std::ostringstream s;
  size_t shown = 0, total = 0;
  s << "<table class=\"failures\"><tr><th>run</th><th>task</th><th>sample</th><th>status</th><th>why</th></tr>";
  for (const ReportRun& run : runs)
    for (const AttemptRecord& r : run.records) {
      if (r.status == "passed" || r.status == "compiled") continue;
      if (++total > max_rows) continue;
      ++shown;
      const std::string sample = r.sample.empty() ? r.candidate_path : r.sample;
      s << "<tr><td>" << Escape(run.name) << "</td><td>" << Escape(r.task) << "</td><td>" << Escape(sample)
        << "</td><td><span class=\"cell\" style=\"background:" << StatusColor(r.status) << "\"></span> "
        << Escape(r.status) << "</td><td title=\"" << Escape(r.message) << "\">"
        << Escape(FailureMessage(r, 160)) << "</td></tr>";
    }
  s << "</table>";
  if (total == 0) return "<p class=\"note\">No attempt failed.</p>";
  if (total > shown)
    s << "<p class=\"note\">" << shown << " of " << total
      << " failed attempts shown; `kvault export` writes them all.</p>";
  return s.str();
}

std::string EnvironmentTable(const std::vector<ReportRun>& runs) {
  std::ostringstream s;
  s << "<table><tr><th>run</th><th>model</th><th>backend</th><th>arch</th><th>device</th>"
       "<th>PyTorch</th><th>Python</th><th>kvault</th><th>host</th></tr>";
  for (const ReportRun& run : runs) {
    const AttemptRecord* r = run.records.empty() ? nullptr : &run.records.front();
    for (const AttemptRecord& a : run.records)
      if (a.environment.is_object() && a.environment.contains("device")) {
        r = &a;
        break;
      }
    const Json env = r ? r->environment : Json::object();
    const Json device = env.is_object() ? env.value("device", Json::object()) : Json::object();
    s << "<tr><td>" << Escape(run.name) << "</td><td>" << Escape(run.model.empty() ? "-" : run.model)
      << "</td><td>" << Escape(r ? r->backend : "") << "</td><td>" << Escape(r ? r->arch : "") << "</td><td>"
      << Escape(Text(device, "name")) << "</td><td>" << Escape(Text(env, "torch")) << "</td><td>"
      << Escape(Text(env, "python")) << "</td><td>" << Escape(r ? r->engine_version : "") << "</td><td>"
      << Escape(Text(env, "host") + (Text(env, "os").empty() ? "" : " (" + Text(env, "os") + ")"))
      << "</td></tr>";
  }
  s << "</table><p class=\"note\">From the environment fingerprint recorded with each run's "
       "attempts (the first that has one); the model of a <code>kvault gen</code> run.</p>";
  return s.str();
}

}  // namespace kvault::report
