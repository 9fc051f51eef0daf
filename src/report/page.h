#pragma once
// The HTML page skeleton of the report: inline stylesheet, sections in order.
// Titles and paragraphs given as text are escaped; section bodies are HTML.
#include <string>

namespace kvault::report {

class Page {
 public:
  explicit Page(std::string title) : title_(std::move(title)) {}
  void Paragraph(const std::string& text);
  // <section id="id"><h2>title</h2> body </section>
  void Section(const std::string& id, const std::string& title, const std::string& body_html);
  // The colors of every status, as a row of swatches.
  std::string StatusLegend() const;
  // The whole document: <!DOCTYPE html> ... </html>.
  std::string Html() const;

 private:
  std::string title_;
  std::string body_;
};

}  // namespace kvault::report
