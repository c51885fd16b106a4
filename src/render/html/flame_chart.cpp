#include "render/html/flame_chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "render/host_render.hpp"
#include "render/html/html_text.hpp"
#include "render/html/svg.hpp"

namespace kernscope::html {
namespace {

constexpr double kLeft = 10, kRight = 950, kTop = 8, kRow = 16;
constexpr double kMinWidth = 1.0;      // px: narrower frames (and what they call) are left out
constexpr double kLabelWidth = 34.0;   // px: narrower frames carry no text, only their tooltip
constexpr double kCharWidth = 7.0;     // px per character of a 12 px label
constexpr std::size_t kMaxRows = 64;   // deeper frames are left out, and the caption says so

struct Node {
  std::string name;
  std::int64_t samples = 0, ns = 0;
  std::map<std::string, std::size_t> children;  // by name: the order frames are drawn in
};

// The merged stacks: node 0 is the group's root; a child per distinct frame name under its caller,
// as collapsed stacks merge lines whose names coincide.
std::vector<Node> build_tree(const Trace& trace, const HostGroup& group) {
  std::vector<Node> nodes(1);
  nodes[0].name = host_group_root(group);
  std::map<std::uint32_t, std::vector<std::string>> names;  // stack -> frame names, root first
  for (std::size_t i = 0; i < group.sample_stacks.size(); ++i) {
    const std::uint32_t s = group.sample_stacks[i];
    auto [it, added] = names.try_emplace(s);
    if (added) it->second = host_stack_names(trace, s);
    const std::int64_t ns = i < group.sample_ns.size() ? group.sample_ns[i] : 0;
    std::size_t at = 0;
    nodes[0].samples += 1;
    nodes[0].ns += ns;
    for (const std::string& name : it->second) {
      auto found = nodes[at].children.find(name);
      if (found == nodes[at].children.end()) {
        found = nodes[at].children.emplace(name, nodes.size()).first;
        nodes.push_back(Node{name, 0, 0, {}});
      }
      at = found->second;
      nodes[at].samples += 1;
      nodes[at].ns += ns;
    }
  }
  return nodes;
}

// Warm colours for Python frames, cool ones for native frames, green for the garbage collector's,
// each name always the same shade (hashed) so neighbours differ and a frame is found again by colour.
std::string frame_color(std::string_view name, bool root) {
  if (root) return "#bab0ac";
  if (name.starts_with("[Python garbage collection]")) return "#59a14f";
  const bool python = name.find(".py)") != std::string_view::npos;
  const std::size_t h = std::hash<std::string_view>{}(name);
  const double shade = static_cast<double>(h % 1000) / 1000.0;
  // hue, saturation 75 %, lightness 62 %: to RGB.
  const double hue = python ? 8 + 44 * shade : 185 + 40 * shade;
  const double s = 0.75, l = 0.62, c = (1 - std::abs(2 * l - 1)) * s;
  const double hp = hue / 60.0, x = c * (1 - std::abs(std::fmod(hp, 2.0) - 1)), m = l - c / 2;
  double r = 0, g = 0, b = 0;
  if (hp < 1) r = c, g = x;
  else if (hp < 2) r = x, g = c;
  else if (hp < 3) g = c, b = x;
  else if (hp < 4) g = x, b = c;
  else if (hp < 5) r = x, b = c;
  else r = c, b = x;
  char out[8];
  std::snprintf(out, sizeof out, "#%02x%02x%02x", static_cast<int>((r + m) * 255 + 0.5), static_cast<int>((g + m) * 255 + 0.5),
                static_cast<int>((b + m) * 255 + 0.5));
  return out;
}

}  // namespace

FlameChart host_flame_chart(const std::string& id, std::string_view description, const Trace& trace, const HostGroup& group) {
  FlameChart out;
  if (group.sample_stacks.empty()) return out;
  const std::vector<Node> nodes = build_tree(trace, group);
  const double total = static_cast<double>(nodes[0].samples);
  const double px_per_sample = (kRight - kLeft) / total;
  const std::int64_t steps = std::max<std::int64_t>(1, group.steps);

  // Which frames are drawn, at which x and depth (root: depth 0), walking callers before callees.
  struct Placed {
    std::size_t node, depth;
    double x;
  };
  std::vector<Placed> placed;
  std::size_t depth_drawn = 0;
  std::vector<Placed> pending{{0, 0, kLeft}};
  while (!pending.empty()) {
    const Placed p = pending.back();
    pending.pop_back();
    placed.push_back(p);
    depth_drawn = std::max(depth_drawn, p.depth + 1);
    double x = p.x;
    for (const auto& [name, child] : nodes[p.node].children) {
      const double w = static_cast<double>(nodes[child].samples) * px_per_sample;
      if (w >= kMinWidth) {
        if (p.depth + 1 < kMaxRows) pending.push_back({child, p.depth + 1, x});
        else out.deeper_left_out = true;
      }
      x += w;
    }
  }
  const double plot_height = kRow * static_cast<double>(depth_drawn);
  Svg svg(id, 960, static_cast<int>(kTop + plot_height + 8), description);
  svg.plot_frame(kLeft, kTop, kRight - kLeft, plot_height);
  for (const Placed& p : placed) {
    const Node& n = nodes[p.node];
    const double w = static_cast<double>(n.samples) * px_per_sample;
    const double y = kTop + plot_height - kRow * static_cast<double>(p.depth + 1);
    const std::string tip = n.name + "\n" + std::to_string(n.samples) + " samples (" + percent(static_cast<double>(n.samples) / total) +
                            " of the group's), " + duration(static_cast<double>(n.ns) / static_cast<double>(steps)) + " per step";
    svg.rect(p.x, y + 0.5, w - 0.5, kRow - 1, frame_color(n.name, p.node == 0), tip, n.name);
    if (w >= kLabelWidth) {
      const auto chars = static_cast<std::size_t>((w - 6) / kCharWidth);
      svg.text(p.x + 3, y + 12, shortened(n.name, chars), "start", "label", tip);
    }
  }
  out.svg = svg.finish();
  out.frames = placed.size();
  out.min_samples = static_cast<std::int64_t>(std::ceil(kMinWidth / px_per_sample));
  return out;
}

}  // namespace kernscope::html
