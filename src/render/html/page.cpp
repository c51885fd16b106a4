#include "render/html/page.hpp"

#include "base/version.hpp"
#include "render/html/html_text.hpp"

namespace kernscope::html {
namespace {

constexpr const char* kStyle = R"css(
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;margin:0;color:#222;background:#fff}
main{max-width:1000px;margin:0 auto;padding:16px 20px 48px}
h1{font-size:22px;margin:8px 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
.sub{color:#555;margin:2px 0;font-size:13px;overflow-wrap:anywhere}
nav{font-size:13px;margin:10px 0}nav a{margin-right:12px;color:#2a5d9f}
.cards{display:flex;flex-wrap:wrap;gap:10px;margin:10px 0}
.card{border:1px solid #ddd;border-radius:6px;padding:8px 12px;min-width:120px}
.card .l{font-size:12px;color:#666}.card .v{font-size:18px;font-weight:600}
figure{margin:12px 0}figcaption{font-size:12px;color:#555;margin-top:4px}
svg.chart{display:block;background:#fff}
svg .label{font-size:12px;fill:#333}svg .axis{font-size:11px;fill:#555}
table{border-collapse:collapse;font-size:12px;margin:8px 0;width:100%}
th,td{border-bottom:1px solid #e6e6e6;padding:3px 6px;text-align:left;vertical-align:top}
td[data-v]{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
th{background:#f4f4f4;cursor:pointer;user-select:none;white-space:nowrap}
th[data-dir=asc]::after{content:" \25B2"}th[data-dir=desc]::after{content:" \25BC"}
td.name{overflow-wrap:anywhere;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:11px;min-width:260px}
.table-wrap{overflow-x:auto}
.note{color:#666;font-size:12px}.warning{color:#a33}
footer{color:#888;font-size:11px;margin-top:32px}
summary{cursor:pointer;font-weight:600;margin:14px 0 4px}h3{font-size:15px;margin:18px 0 6px}
details.fold>summary{font-size:18px;margin:22px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
button{font-size:12px}ol.actions li{margin:4px 0}
)css";

// Sorting: numbers by data-v, text by its content; the first click sorts numbers descending.
constexpr const char* kScript = R"js(
"use strict";
const openAll = document.getElementById("open-all");
if (openAll) openAll.addEventListener("click", () => { for (const d of document.querySelectorAll("details.fold")) d.open = true; });
for (const th of document.querySelectorAll("table.sortable th")) {
  th.addEventListener("click", () => {
    const table = th.closest("table");
    const column = Array.prototype.indexOf.call(th.parentNode.children, th);
    const numeric = th.dataset.type === "num";
    const dir = th.dataset.dir ? (th.dataset.dir === "asc" ? "desc" : "asc") : (numeric ? "desc" : "asc");
    for (const other of th.parentNode.children) delete other.dataset.dir;
    th.dataset.dir = dir;
    const body = table.tBodies[0];
    const key = (row) => {
      const cell = row.cells[column];
      return numeric ? Number(cell.dataset.v) : cell.textContent;
    };
    const rows = Array.from(body.rows);
    rows.sort((a, b) => {
      const x = key(a), y = key(b);
      const order = numeric ? x - y : String(x).localeCompare(String(y));
      return dir === "asc" ? order : -order;
    });
    for (const row of rows) body.appendChild(row);
  });
}
)js";

}  // namespace

void Page::section(std::string id, std::string heading, std::string body, bool folded) {
  if (!folded) {
    sections_ += "<section id=\"" + escape(id) + "\"><h2>" + escape(heading) + "</h2>" + body + "</section>\n";
    return;
  }
  any_folded_ = true;
  sections_ += "<section id=\"" + escape(id) + "\"><details class=\"fold\"><summary>" + escape(heading) + "</summary>" + body +
               "</details></section>\n";
}

std::string Page::finish() const {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  // Nothing may be fetched: the page is one file that must work offline and leak nothing.
  out += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
         "script-src 'unsafe-inline'; img-src data:\">";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">";
  out += "<meta name=\"generator\" content=\"kernscope " + std::string(kVersion) + "\">";
  out += "<title>" + escape(title_) + "</title><style>" + kStyle + "</style></head>\n<body><main>";
  out += "<h1>" + escape(title_) + "</h1>";
  for (const auto& s : subtitles_) out += "<p class=\"sub\">" + escape(s) + "</p>";
  if (any_folded_) out += "<p class=\"sub\"><button type=\"button\" id=\"open-all\">Open every section</button></p>";
  out += "\n" + sections_;
  out += "<footer>kernscope " + escape(kVersion) + "</footer></main><script>" + kScript + "</script></body></html>\n";
  return out;
}

std::string paragraph(const std::string& text, const std::string& css_class) {
  return (css_class.empty() ? "<p>" : "<p class=\"" + css_class + "\">") + escape(text) + "</p>";
}

std::string bullet_list(const std::vector<std::string>& items, bool numbered) {
  std::string out = numbered ? "<ol>" : "<ul>";
  for (const auto& item : items) out += "<li>" + escape(item) + "</li>";
  return out + (numbered ? "</ol>" : "</ul>");
}

std::string cards(const std::vector<std::pair<std::string, std::string>>& label_values) {
  std::string out = "<div class=\"cards\">";
  for (const auto& [label, value] : label_values) {
    out += "<div class=\"card\"><div class=\"l\">" + escape(label) + "</div><div class=\"v\">" + escape(value) + "</div></div>";
  }
  return out + "</div>";
}

std::string collapsible(const std::string& summary, const std::string& body, bool open) {
  return std::string(open ? "<details open>" : "<details>") + "<summary>" + escape(summary) + "</summary>" + body + "</details>";
}

std::string figure(const std::string& svg, const std::string& caption) {
  return "<figure>" + svg + "<figcaption>" + escape(caption) + "</figcaption></figure>";
}

}  // namespace kernscope::html
