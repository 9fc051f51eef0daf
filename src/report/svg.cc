#include "report/svg.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace kvault::report {
namespace {

constexpr int kLeft = 56, kRight = 16, kTop = 28, kBottom = 64;

double NiceStep(double range, int target) {
  double raw = range / std::max(1, target);
  double mag = std::pow(10, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (raw <= m * mag) return m * mag;
  return 10 * mag;
}

std::string Text(double x, double y, const std::string& s, const char* anchor, const char* extra = "") {
  std::ostringstream o;
  o << "<text x=\"" << Num(x, 1) << "\" y=\"" << Num(y, 1) << "\" text-anchor=\"" << anchor << "\" "
    << extra << ">" << Escape(s) << "</text>";
  return o.str();
}

std::string Legend(const std::vector<Series>& series, int width) {
  std::ostringstream o;
  double x = kLeft;
  for (const Series& s : series) {
    o << "<rect x=\"" << Num(x, 1) << "\" y=\"8\" width=\"12\" height=\"12\" fill=\"" << Escape(s.color) << "\"/>"
      << Text(x + 16, 18, s.name, "start");
    x += 28 + 7.0 * s.name.size();
  }
  return o.str();
}

// Horizontal grid lines and y tick labels from 0..ymax.
std::string YGrid(double ymin, double ymax, int width, int height, const std::string& label,
                  bool integer_ticks) {
  std::ostringstream o;
  double plot_h = height - kTop - kBottom;
  double step = NiceStep(ymax - ymin, 5);
  if (integer_ticks) step = std::max(1.0, std::ceil(step));
  for (double v = ymin; v <= ymax + 1e-9; v += step) {
    double y = kTop + plot_h * (1 - (v - ymin) / (ymax - ymin));
    o << "<line x1=\"" << kLeft << "\" x2=\"" << width - kRight << "\" y1=\"" << Num(y, 1) << "\" y2=\""
      << Num(y, 1) << "\" class=\"grid\"/>" << Text(kLeft - 6, y + 4, Num(v, step < 1 ? 2 : 0), "end");
  }
  o << Text(14, kTop + plot_h / 2, label, "middle",
            ("transform=\"rotate(-90 14 " + Num(kTop + plot_h / 2, 1) + ")\"").c_str());
  return o.str();
}

std::string Open(int width, int height) {
  return "<svg class=\"chart\" viewBox=\"0 0 " + std::to_string(width) + " " + std::to_string(height) +
         "\" width=\"" + std::to_string(width) + "\" height=\"" + std::to_string(height) + "\" role=\"img\">";
}

}  // namespace

std::string Escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string Num(double v, int digits) {
  std::ostringstream o;
  o.setf(std::ios::fixed);
  o.precision(digits);
  o << v;
  return o.str();
}

std::string LineChart(const std::vector<Series>& series, const Axis& x, const Axis& y, int width, int height) {
  std::ostringstream o;
  o << Open(width, height) << YGrid(y.min, y.max, width, height, y.label, y.integer_ticks);
  double plot_w = width - kLeft - kRight, plot_h = height - kTop - kBottom;
  double xr = x.max > x.min ? x.max - x.min : 1;
  auto px = [&](double v) { return kLeft + plot_w * (v - x.min) / xr; };
  auto py = [&](double v) { return kTop + plot_h * (1 - (v - y.min) / (y.max - y.min)); };
  double step = x.integer_ticks ? std::max(1.0, std::ceil(NiceStep(xr, 10))) : NiceStep(xr, 8);
  for (double v = x.min; v <= x.max + 1e-9; v += step)
    o << Text(px(v), height - kBottom + 16, Num(v, x.integer_ticks ? 0 : 1), "middle");
  o << Text(kLeft + plot_w / 2, height - kBottom + 36, x.label, "middle");
  for (const Series& s : series) {
    std::ostringstream pts;
    for (size_t i = 0; i < s.x.size(); ++i) pts << Num(px(s.x[i]), 1) << "," << Num(py(s.y[i]), 1) << " ";
    o << "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"" << Escape(s.color) << "\" points=\"" << pts.str() << "\"/>";
    for (size_t i = 0; i < s.x.size(); ++i)
      o << "<circle r=\"3.5\" cx=\"" << Num(px(s.x[i]), 1) << "\" cy=\"" << Num(py(s.y[i]), 1) << "\" fill=\""
        << Escape(s.color) << "\"><title>" << Escape(s.name) << ": " << Num(s.x[i], 0) << " -> "
        << Num(s.y[i], 3) << "</title></circle>";
  }
  o << Legend(series, width) << "</svg>";
  return o.str();
}

std::string BarChart(const std::vector<std::string>& labels, const std::vector<Series>& series,
                     const std::string& y_label, int width, int height) {
  double ymax = 0;
  for (const Series& s : series)
    for (double v : s.y) ymax = std::max(ymax, v);
  double step = std::max(1.0, std::ceil(NiceStep(std::max(ymax, 1.0), 5)));
  ymax = std::max(1.0, step * std::ceil(ymax / step));
  std::ostringstream o;
  o << Open(width, height) << YGrid(0, ymax, width, height, y_label, true);
  double plot_w = width - kLeft - kRight, plot_h = height - kTop - kBottom;
  double group_w = plot_w / std::max<size_t>(1, labels.size());
  double bar_w = group_w * 0.8 / std::max<size_t>(1, series.size());
  for (size_t g = 0; g < labels.size(); ++g) {
    double gx = kLeft + g * group_w + group_w * 0.1;
    for (size_t si = 0; si < series.size(); ++si) {
      double v = g < series[si].y.size() ? series[si].y[g] : 0;
      double h = plot_h * v / ymax;
      o << "<rect x=\"" << Num(gx + si * bar_w, 1) << "\" y=\"" << Num(kTop + plot_h - h, 1) << "\" width=\""
        << Num(std::max(1.0, bar_w - 1), 1) << "\" height=\"" << Num(h, 1) << "\" fill=\""
        << Escape(series[si].color) << "\"><title>" << Escape(series[si].name) << ", " << Escape(labels[g])
        << ": " << Num(v, v == std::floor(v) ? 0 : 3) << "</title></rect>";
    }
    double cx = kLeft + (g + 0.5) * group_w, cy = height - kBottom + 14;
    o << Text(cx, cy, labels[g], "end",
              ("transform=\"rotate(-35 " + Num(cx, 1) + " " + Num(cy, 1) + ")\"").c_str());
  }
  o << Legend(series, width) << "</svg>";
  return o.str();
}

}  // namespace kvault::report
