#include "report/page.h"

#include "report/report.h"
#include "report/svg.h"

namespace kvault::report {
namespace {

constexpr const char* kStyle = R"(
body { font-family: "DejaVu Sans", Arial, sans-serif; margin: 24px 32px; color: #222; max-width: 1200px; }
h1 { font-size: 24px; margin-bottom: 4px; }
h2 { font-size: 18px; margin-top: 28px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
h3 { font-size: 15px; }
table { border-collapse: collapse; font-size: 13px; margin: 8px 0; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; }
th { background: #f4f4f4; font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
span.ci { color: #777; font-size: 11px; }
p.note { color: #666; font-size: 12px; }
svg.chart { font-size: 11px; display: block; margin: 8px 0; }
svg.chart line.grid { stroke: #e5e5e5; }
table.grid td { padding: 2px; border: none; }
table.grid td.task { padding-right: 10px; font-family: monospace; }
table.grid th { background: none; border: none; font-weight: normal; color: #888; text-align: center; }
span.cell { display: inline-block; min-width: 28px; height: 18px; border-radius: 3px; color: #fff;
            font-size: 10px; text-align: center; line-height: 18px; }
.legend span.cell { min-width: 14px; margin: 0 4px 0 12px; vertical-align: middle; }
.legend { font-size: 12px; }
)";

}  // namespace

void Page::Paragraph(const std::string& text) { body_ += "<p>" + Escape(text) + "</p>\n"; }

void Page::Section(const std::string& id, const std::string& title, const std::string& body_html) {
  body_ += "<section id=\"" + Escape(id) + "\"><h2>" + Escape(title) + "</h2>\n" + body_html + "\n</section>\n";
}

std::string Page::StatusLegend() const {
  std::string s = "<p class=\"legend\">";
  for (const char* st : {"passed", "mismatch", "policy_violation", "compile_error", "load_error", "runtime_error", "crash",
                         "timeout", "oom", "parse_error", "unsupported", "compiled", "task_error", "infra_error"})
    s += "<span class=\"cell\" style=\"background:" + StatusColor(st) + "\"></span>" + st;
  return s + "</p><p class=\"note\">A cell is one attempt, in store order; the number in a passed "
             "cell is its speedup. Hover a cell for the candidate.</p>";
}

std::string Page::Html() const {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + Escape(title_) +
         "</title><style>" + kStyle + "</style></head>\n<body><h1>" + Escape(title_) + "</h1>\n" + body_ +
         "</body></html>\n";
}

}  // namespace kvault::report
