// One self-contained HTML page: styles and the table-sorting script inline, a Content-Security-
// Policy that forbids fetching anything (no fonts, scripts, images or styles from elsewhere), and
// the sections in the order they were added. Every kernscope HTML output (report, diff, roofline)
// is one Page.
#pragma once

#include <string>
#include <vector>

namespace kernscope::html {

class Page {
 public:
  explicit Page(std::string title) : title_(std::move(title)) {}
  // Lines under the title (trace, devices...), escaped.
  void subtitle(std::string line) { subtitles_.push_back(std::move(line)); }
  // A section: its heading is escaped, its body is HTML built by the charts, tables and helpers.
  // Folded: the heading alone shows until clicked (detail below the page's answer); "Open every
  // section" at the top unfolds them all.
  void section(std::string id, std::string heading, std::string body, bool folded = false);
  std::string finish() const;

 private:
  std::string title_;
  std::vector<std::string> subtitles_;
  std::string sections_;
  bool any_folded_ = false;
};

// Small pieces of escaped HTML for section bodies.
std::string paragraph(const std::string& text, const std::string& css_class = "");
std::string bullet_list(const std::vector<std::string>& items, bool numbered = false);
// Headline figures as cards: a label above a value.
std::string cards(const std::vector<std::pair<std::string, std::string>>& label_values);
// Long content (a table of every step) folded under a line that says what it holds.
std::string collapsible(const std::string& summary, const std::string& body, bool open = false);
// A chart (inline SVG) with a caption under it.
std::string figure(const std::string& svg, const std::string& caption);

}  // namespace kernscope::html
