//===- Pictures.cpp - Drawings of an engine -------------------------------===//
#include "runtime/engine/Pictures.h"

#include "runtime/support/AtomicFile.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <sys/wait.h>
#include <unistd.h>

namespace tpc::runtime {

namespace {

bool endsWith(const std::string &s, const char *suffix) {
  std::string t(suffix);
  return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
}

/// A string as a double-quoted dot or XML-safe label.
std::string escaped(const std::string &s, bool xml) {
  std::string out;
  for (char c : s) {
    if (xml && c == '&') out += "&amp;";
    else if (xml && c == '<') out += "&lt;";
    else if (xml && c == '>') out += "&gt;";
    else if (!xml && (c == '"' || c == '\\')) out += std::string("\\") + c;
    else if (!xml && c == '\n') out += "\\n"; // a line break in a label
    else out += c;
  }
  return out;
}

/// Runs `dot -Tsvg -o path` with `text` on its standard input.
Status renderSvg(const std::string &text, const std::string &path) {
  std::string tmp = path + ".dot.tmp";
  TPC_RETURN_IF_ERROR(AtomicFile::writeWhole(tmp, text));
  pid_t pid = ::fork();
  if (pid == 0) {
    ::execlp("dot", "dot", "-Tsvg", "-o", path.c_str(), tmp.c_str(),
             static_cast<char *>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) < 0)
    status = -1;
  ::unlink(tmp.c_str());
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
    return Status::error("drawing " + path + " needs Graphviz's `dot` "
                         "(Debian package graphviz, which scripts/install-deps "
                         "installs); or write a .dot file instead");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return Status::error("Graphviz's dot failed to draw " + path);
  return Status::ok();
}

} // namespace

std::string planToDot(const RankPlan &plan, const std::string &title) {
  std::string dot = "digraph \"" + escaped(title, false) +
                    "\" {\n  rankdir=TB;\n  node [shape=box, style=filled, "
                    "fillcolor=white, fontname=\"Helvetica\", fontsize=10];\n";
  // Who last wrote each byte range of the arena: steps read through views
  // (a reshape is a second buffer at the same offset), so an edge follows
  // the bytes, not the buffer id. Graph inputs are their own nodes.
  struct Write {
    uint64_t begin, end;
    std::string node;
  };
  std::vector<Write> writes;
  auto recordWrite = [&](uint32_t b, const std::string &node) {
    const PlanBuffer &buf = plan.buffers[b];
    if (buf.kind == BufferKind::Arena)
      writes.push_back({buf.offset, buf.offset + std::max<uint64_t>(buf.bytes, 1),
                        node});
  };
  auto lastWriter = [&](uint32_t b) -> const std::string * {
    const PlanBuffer &buf = plan.buffers[b];
    if (buf.kind != BufferKind::Arena)
      return nullptr;
    uint64_t end = buf.offset + std::max<uint64_t>(buf.bytes, 1);
    for (auto it = writes.rbegin(); it != writes.rend(); ++it)
      if (it->begin < end && buf.offset < it->end)
        return &it->node;
    return nullptr;
  };
  for (const PlanBinding &in : plan.inputs) {
    std::string id = "in_" + std::to_string(in.buffer);
    dot += "  " + id + " [shape=ellipse, fillcolor=\"#fff2cc\", label=\"" +
           escaped(in.name + "\n" + plan.buffers[in.buffer].desc.str(), false) +
           "\"];\n";
    recordWrite(in.buffer, id);
  }
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep &s = plan.steps[i];
    std::string id = "s" + std::to_string(i);
    std::string role = s.attrs.getString("tp_role", "");
    std::string style;
    if (s.kind != StepKind::Kernel)
      style = "shape=octagon, fillcolor=\"#f4cccc\", color=\"#cc0000\", "
              "penwidth=2";
    else if (role == "column")
      style = "fillcolor=\"#cfe2f3\"";
    else if (role == "row")
      style = "fillcolor=\"#d9ead3\"";
    else if (role == "replicated")
      style = "fillcolor=\"#d9d9d9\"";
    std::string label = s.kernel + (role.empty() ? "" : " (" + role + ")");
    if (!s.node.empty())
      label += "\n" + s.node;
    dot += "  " + id + " [label=\"" + escaped(label, false) + "\"" +
           (style.empty() ? "" : ", " + style) + "];\n";
    std::vector<std::string> from;
    for (uint32_t b : s.inputs)
      if (b != kAbsentBuffer)
        if (const std::string *w = lastWriter(b);
            w && std::find(from.begin(), from.end(), *w) == from.end())
          from.push_back(*w);
    for (const std::string &w : from)
      dot += "  " + w + " -> " + id + ";\n";
    for (uint32_t b : s.outputs)
      recordWrite(b, id);
  }
  for (const PlanBinding &out : plan.outputs) {
    std::string id = "out_" + std::to_string(out.buffer);
    dot += "  " + id + " [shape=ellipse, fillcolor=\"#fff2cc\", label=\"" +
           escaped(out.name + "\n" + plan.buffers[out.buffer].desc.str(),
                   false) +
           "\"];\n";
    if (const std::string *w = lastWriter(out.buffer))
      dot += "  " + *w + " -> " + id + ";\n";
  }
  dot += "}\n";
  return dot;
}

std::string memoryChartSvg(const EngineSummary &summary) {
  struct Bar {
    const char *label;
    const char *colour;
    uint64_t (*bytes)(const RankSummary &);
  };
  const Bar bars[] = {
      {"weights", "#6fa8dc",
       [](const RankSummary &r) { return r.weightBytes; }},
      {"arena", "#93c47d", [](const RankSummary &r) { return r.arena.bytes; }},
      {"unplanned", "#e06666",
       [](const RankSummary &r) { return r.arena.unplannedBytes; }},
      {"lower bound", "#f6b26b",
       [](const RankSummary &r) { return r.arena.lowerBoundBytes; }}};
  uint64_t most = 1;
  for (const RankSummary &r : summary.ranks)
    for (const Bar &b : bars)
      most = std::max(most, b.bytes(r));
  const int left = 150, width = 460, barH = 14, gap = 6;
  const int rankH = int(std::size(bars)) * (barH + 2) + gap + 18;
  const int height = 40 + int(summary.ranks.size()) * rankH;
  std::string svg =
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
      std::to_string(left + width + 160) + "\" height=\"" +
      std::to_string(height) +
      "\" font-family=\"Helvetica\" font-size=\"11\">\n<text x=\"8\" "
      "y=\"18\" font-size=\"13\">" +
      escaped(summary.manifest.dir, true) + ": bytes per rank (tp " +
      std::to_string(summary.manifest.tp) + ")</text>\n";
  int y = 36;
  for (const RankSummary &r : summary.ranks) {
    svg += "<text x=\"8\" y=\"" + std::to_string(y + 10) + "\">rank " +
           std::to_string(r.rank) + "</text>\n";
    y += 16;
    for (const Bar &b : bars) {
      uint64_t v = b.bytes(r);
      int w = int(double(width) * double(v) / double(most));
      svg += "<text x=\"60\" y=\"" + std::to_string(y + 11) + "\">" +
             b.label + "</text><rect x=\"" + std::to_string(left) + "\" y=\"" +
             std::to_string(y) + "\" width=\"" + std::to_string(std::max(w, 1)) +
             "\" height=\"" + std::to_string(barH) + "\" fill=\"" + b.colour +
             "\"/><text x=\"" + std::to_string(left + std::max(w, 1) + 6) +
             "\" y=\"" + std::to_string(y + 11) + "\">" +
             escaped(humanBytes(v), true) + "</text>\n";
      y += barH + 2;
    }
    y += gap;
  }
  svg += "</svg>\n";
  return svg;
}

Status writeGraph(const std::string &dir, int rank, const std::string &path) {
  const bool svg = endsWith(path, ".svg");
  if (!svg && !endsWith(path, ".dot"))
    return Status::error("--graph writes .svg or .dot, not '" + path + "'");
  EngineManifest manifest;
  TPC_RETURN_IF_ERROR(EngineManifest::load(dir, manifest, /*holdFolder=*/true));
  FolderRelease release(manifest);
  RankPlan plan;
  TPC_RETURN_IF_ERROR(readRankPlan(manifest, rank, plan).withContext("--"));
  std::string dot = planToDot(plan, "rank " + std::to_string(rank) + " of " +
                                        std::to_string(manifest.tp));
  return svg ? renderSvg(dot, path) : AtomicFile::writeWhole(path, dot);
}

Status writeMemoryChart(const std::string &dir, const std::string &path) {
  if (!endsWith(path, ".svg"))
    return Status::error("--memory writes an .svg, not '" + path + "'");
  EngineSummary summary;
  TPC_RETURN_IF_ERROR(inspectEngine(dir, summary, /*verifyWeights=*/false));
  return AtomicFile::writeWhole(path, memoryChartSvg(summary));
}

} // namespace tpc::runtime
