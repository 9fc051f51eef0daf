#pragma once
// Inline SVG charts for the HTML report: plain strings, no scripts, no external
// references (the <svg> element carries no xmlns, which HTML5 does not need).
// Every text given here is HTML-escaped by the functions.
#include <string>
#include <vector>

namespace kvault::report {

struct Series {
  std::string name;
  std::string color;       // CSS color
  std::vector<double> x, y;  // REQUIRES: same size
};

struct Axis {
  std::string label;
  double min = 0, max = 1;
  bool integer_ticks = false;  // ticks at whole numbers (e.g. k)
};

// Lines with dots, one per series, and a legend.
std::string LineChart(const std::vector<Series>& series, const Axis& x, const Axis& y, int width, int height);

// Grouped vertical bars of counts (integer ticks): `labels` along x, one bar per series in each group (series.y
// holds one value per label; series.x is unused). y from 0 to the largest value.
std::string BarChart(const std::vector<std::string>& labels, const std::vector<Series>& series,
                     const std::string& y_label, int width, int height);

// Escapes & < > " ' for HTML text and attributes.
std::string Escape(const std::string& s);

// A number with `digits` digits after the point.
std::string Num(double v, int digits);

}  // namespace kvault::report
