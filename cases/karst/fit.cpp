// karst_fit: fit Pe, St and Theta of the karst heat model to an outlet curve (seed 002 chapter 7,
// inversion.hpp): Polak-Ribiere NLCG in ensembles, optionally from the best of a coarse grid.
//
// Usage:
//   karst_fit --forcing forcing.csv (--observed outlet.csv | --synthetic PE,ST,THETA) [options]
//
//   forcing.csv   a header, then one row per step with the columns dt, v, inlet (any order, other
//                 columns ignored): dimensionless dt*, v = V / V-bar, inlet T*
//   outlet.csv    a header, then one row per step: one column, or the column "outlet"
//   --synthetic PE,ST,THETA   make the observed curve with the model (a demo or a twin)
//   --n N --m M --dr DR       the grid (default 1024, 128, 0.05)
//   --psi PSI                 Psi (default 2.235, Table 4.3)
//   --start PE,ST,THETA       the start (default Table 7.3: 2000,10,4.5)
//   --bounds PL,PH,SL,SH,TL,TH  the box (default Table 7.3: 1900,2050,0.75,20,0.1,6)
//   --grid-search K           start from the best of a K^3 grid over the box and the start
//   --max-iterations I        (default 100)      --tolerance MISFIT  stop at this misfit (default 0)
//   --backend NAME            where the forward runs go: cpu (default; forward_cpu on threads), gpu
//                             (karst::Single on GPU 0), cuda (MultiCuda) or cush (MultiCush) on all GPUs
//   --threads T               CPU threads (default 0: all)
//   --out-params FILE         name,value rows: pe, st, theta, misfit, iterations, ensemble_calls,
//                             forward_runs, seconds
//   --out-curves FILE         step, time, inlet, observed, fitted (the fitted curve from forward_cpu)
//   --plot FILE.png           observed vs fitted (python3 plot_fit.py; the curves go to FILE.png.csv
//                             unless --out-curves is given)   --plot-script PATH  another script
//
// Example (a twin on a small grid; the forcing: a Gaussian inlet pulse, 750 steps of dt* = 0.004):
//   python3 -c "import math; print('dt,v,inlet'); [print(f'0.004,1,{1 + 0.5 * math.exp(-((0.004 * (s + 1)
//     - 0.3) / 0.08) ** 2)}') for s in range(750)]" > forcing.csv
//   karst_fit --forcing forcing.csv --synthetic 1940,6,2.5 --n 128 --m 32 --plot fit.png
//
// Exit status: 0 done, 2 bad input (usage, a missing file, a bad CSV line, lengths that differ, an
// unstable step), 1 anything else (the plot script failed).
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cush/device_set.hpp"
#include "ensemble.hpp"
#include "inversion.hpp"

extern char** environ;

namespace {

namespace karst = cases::karst;

constexpr const char* kUsage =
    "usage: karst_fit --forcing FILE (--observed FILE | --synthetic PE,ST,THETA) [--n N] [--m M] [--dr DR]\n"
    "                 [--psi PSI] [--start PE,ST,THETA] [--bounds PL,PH,SL,SH,TL,TH] [--grid-search K]\n"
    "                 [--max-iterations I] [--tolerance MISFIT] [--backend cpu] [--threads T]\n"
    "                 [--out-params FILE] [--out-curves FILE] [--plot FILE.png] [--plot-script PATH]\n"
    "forcing CSV: header, then dt,v,inlet per step; observed CSV: header, one column or 'outlet', one row per step\n";

// Bad input: exit status 2.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The evaluator of a backend: "cpu" (forward_cpu over threads). A GPU backend is one more branch
// here, returning an Evaluate that runs each call's members as one batched forward run.
karst::Evaluate make_evaluator(const std::string& backend, const karst::Grid& grid, const karst::Forcing& forcing,
                               const std::vector<double>& observed, unsigned threads) {
  if (backend == "cpu") return karst::evaluate_cpu(grid, forcing, observed, threads);
  const karst::Setup setup{karst::Model::heat, grid, karst::Outlet::advective};
  if (backend == "gpu")
    return karst::evaluate_on(std::make_shared<karst::Single>(setup, cases::Devices::first(1)), forcing, observed);
  const int gpus = cush::DeviceSet::available();
  if (backend == "cuda" && gpus > 0)
    return karst::evaluate_on(std::make_shared<karst::MultiCuda>(setup, cases::Devices::first(gpus)), forcing, observed);
  if (backend == "cush" && gpus > 0)
    return karst::evaluate_on(std::make_shared<karst::MultiCush>(setup, cases::Devices::first(gpus)), forcing, observed);
  if ((backend == "cuda" || backend == "cush") && gpus == 0)
    throw InputError("backend '" + backend + "' needs a GPU: " + cush::DeviceSet::unavailable_reason());
  throw InputError("unknown backend '" + backend + "'; known backends: cpu, gpu (one GPU), cuda (raw CUDA, all GPUs), "
                   "cush (cush, all GPUs)");
}

double number(const std::string& text, const std::string& what) {
  char* end = nullptr;
  const double x = std::strtod(text.c_str(), &end);
  while (end && (*end == ' ' || *end == '\t' || *end == '\r')) ++end;
  if (text.empty() || end == text.c_str() || *end != '\0' || !std::isfinite(x))
    throw InputError(what + ": '" + text + "' is not a finite number");
  return x;
}

std::size_t count(const std::string& text, const std::string& what) {
  const double x = number(text, what);
  if (x < 0.0 || x != std::floor(x) || x > 1e9) throw InputError(what + ": '" + text + "' is not a count");
  return static_cast<std::size_t>(x);
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream in(line);
  for (std::string cell; std::getline(in, cell, ',');) {
    const auto first = cell.find_first_not_of(" \t\r"), last = cell.find_last_not_of(" \t\r");
    cells.push_back(first == std::string::npos ? "" : cell.substr(first, last - first + 1));
  }
  return cells;
}

std::vector<double> numbers(const std::string& list, std::size_t n, const std::string& what) {
  const std::vector<std::string> cells = split(list);
  if (cells.size() != n) throw InputError(what + ": expected " + std::to_string(n) + " comma-separated numbers");
  std::vector<double> out;
  for (const std::string& c : cells) out.push_back(number(c, what));
  return out;
}

// A CSV file: its header and the chosen columns of every row (blank lines skipped).
std::vector<std::vector<double>> read_columns(const std::string& path, const std::vector<std::string>& wanted,
                                              bool single_column_ok) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open");
  std::string line;
  if (!std::getline(in, line)) throw InputError(path + ": empty (a header is expected)");
  const std::vector<std::string> header = split(line);
  std::vector<std::size_t> at;
  for (const std::string& name : wanted) {
    std::size_t k = 0;
    while (k < header.size() && header[k] != name) ++k;
    if (k == header.size() && !(single_column_ok && header.size() == 1))
      throw InputError(path + ":1: the header has no column '" + name + "'");
    at.push_back(k == header.size() ? 0 : k);
  }
  std::vector<std::vector<double>> columns(wanted.size());
  for (std::size_t number_of_line = 2; std::getline(in, line); ++number_of_line) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::vector<std::string> cells = split(line);
    const std::string where = path + ":" + std::to_string(number_of_line);
    if (cells.size() != header.size())
      throw InputError(where + ": " + std::to_string(cells.size()) + " fields, the header has " +
                       std::to_string(header.size()));
    for (std::size_t c = 0; c < wanted.size(); ++c) columns[c].push_back(number(cells[at[c]], where));
  }
  if (columns[0].empty()) throw InputError(path + ": no rows");
  return columns;
}

karst::Forcing read_forcing(const std::string& path) {
  std::vector<std::vector<double>> c = read_columns(path, {"dt", "v", "inlet"}, false);
  return karst::Forcing{std::move(c[0]), std::move(c[1]), std::move(c[2])};
}

struct Options {
  std::string forcing, observed, backend = "cpu", out_params, out_curves, plot, plot_script;
  std::vector<double> synthetic;
  karst::Grid grid;
  karst::Groups start = karst::table_7_3_start(karst::Groups{});
  karst::Bounds bounds;
  karst::NlcgOptions nlcg;
  unsigned threads = 0;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) throw InputError(flag + ": a value is expected (karst_fit --help)");
    const std::string value = argv[++i];
    if (flag == "--forcing") o.forcing = value;
    else if (flag == "--observed") o.observed = value;
    else if (flag == "--synthetic") o.synthetic = numbers(value, 3, flag);
    else if (flag == "--n") o.grid.n = count(value, flag);
    else if (flag == "--m") o.grid.m = count(value, flag);
    else if (flag == "--dr") o.grid.dr = number(value, flag);
    else if (flag == "--psi") o.start.psi = number(value, flag);
    else if (flag == "--start") {
      const std::vector<double> s = numbers(value, 3, flag);
      o.start.pe = s[0], o.start.st = s[1], o.start.theta = s[2];
    } else if (flag == "--bounds") {
      const std::vector<double> b = numbers(value, 6, flag);
      o.bounds.pe.lo = b[0], o.bounds.pe.hi = b[1], o.bounds.st.lo = b[2], o.bounds.st.hi = b[3];
      o.bounds.theta.lo = b[4], o.bounds.theta.hi = b[5];
    } else if (flag == "--grid-search") o.nlcg.coarse_grid = count(value, flag);
    else if (flag == "--max-iterations") o.nlcg.max_iterations = count(value, flag);
    else if (flag == "--tolerance") o.nlcg.misfit_tolerance = number(value, flag);
    else if (flag == "--backend") o.backend = value;
    else if (flag == "--threads") o.threads = static_cast<unsigned>(count(value, flag));
    else if (flag == "--out-params") o.out_params = value;
    else if (flag == "--out-curves") o.out_curves = value;
    else if (flag == "--plot") o.plot = value;
    else if (flag == "--plot-script") o.plot_script = value;
    else throw InputError("unknown option " + flag + " (karst_fit --help)");
  }
  if (o.forcing.empty()) throw InputError("--forcing FILE is required");
  if (o.observed.empty() == o.synthetic.empty())
    throw InputError("give one of --observed FILE and --synthetic PE,ST,THETA");
  return o;
}

std::vector<double> observed_curve(const Options& o, const karst::Forcing& forcing) {
  if (!o.synthetic.empty()) {
    karst::Groups truth = o.start;
    truth.pe = o.synthetic[0], truth.st = o.synthetic[1], truth.theta = o.synthetic[2];
    return karst::forward_cpu(karst::Model::heat, o.grid, forcing, std::vector<karst::Groups>{truth},
                              karst::Outlet::advective, o.threads);
  }
  std::vector<double> curve = read_columns(o.observed, {"outlet"}, true)[0];
  if (curve.size() != forcing.steps())
    throw InputError(o.observed + ": " + std::to_string(curve.size()) + " rows, the forcing has " +
                     std::to_string(forcing.steps()) + " steps");
  return curve;
}

std::ofstream open_out(const std::string& path) {
  std::ofstream out(path);
  if (!out) throw InputError(path + ": cannot write");
  out.precision(12);
  return out;
}

void write_params(const std::string& path, const karst::Fit& fit, double seconds) {
  std::ofstream out = open_out(path);
  out << "name,value\npe," << fit.groups.pe << "\nst," << fit.groups.st << "\ntheta," << fit.groups.theta
      << "\nmisfit," << fit.misfit << "\niterations," << fit.iterations << "\nensemble_calls," << fit.ensemble_calls
      << "\nforward_runs," << fit.forward_runs << "\nseconds," << seconds << "\n";
}

void write_curves(const std::string& path, const karst::Forcing& forcing, const std::vector<double>& observed,
                  const std::vector<double>& fitted) {
  std::ofstream out = open_out(path);
  out << "step,time,inlet,observed,fitted\n";
  double time = 0.0;
  for (std::size_t s = 0; s < forcing.steps(); ++s) {
    time += forcing.dt[s];
    out << s << "," << time << "," << forcing.inlet[s] << "," << observed[s] << "," << fitted[s] << "\n";
  }
}

// python3 SCRIPT CURVES -o PNG --title TITLE, without a shell (no quoting of paths).
void plot(const Options& o, const std::string& curves, const karst::Fit& fit) {
#ifdef KARST_SOURCE_DIR
  const std::string script = o.plot_script.empty() ? std::string(KARST_SOURCE_DIR) + "/plot_fit.py" : o.plot_script;
#else
  const std::string script = o.plot_script.empty() ? "cases/karst/plot_fit.py" : o.plot_script;
#endif
  char title[160];
  std::snprintf(title, sizeof title, "fitted Pe = %.5g, St = %.5g, Theta = %.5g (RMS misfit %.3g)", fit.groups.pe,
                fit.groups.st, fit.groups.theta, fit.misfit);
  std::vector<std::string> args = {"python3", script, curves, "-o", o.plot, "--title", title};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  int status = 0;
  if (posix_spawnp(&pid, "python3", nullptr, nullptr, argv.data(), environ) != 0 || waitpid(pid, &status, 0) != pid ||
      !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("the plot script failed: python3 " + script + " (matplotlib installed?)");
}

// Eq. 4.21 for the start and for the box's largest St (the worst member NLCG may run), before any
// run: a violation deep inside a fit would waste the runs before it.
void check_stability(const Options& o, const karst::Forcing& forcing) {
  karst::Groups worst = o.start;
  worst.st = o.bounds.st.hi;
  try {
    karst::check(karst::Model::heat, o.grid, forcing, std::vector<karst::Groups>{o.start, worst});
  } catch (const std::invalid_argument& e) {
    throw InputError(std::string(e.what()) + " (member 0: the start, member 1: the largest St of the bounds)");
  }
}

void progress(const karst::Iteration& it, std::chrono::steady_clock::time_point t0) {
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("iteration %3zu: Pe %.6g St %.6g Theta %.6g misfit %.4e step %.2e%s  [%zu runs in %zu ensembles, "
              "%.1f s]\n",
              it.index, it.groups.pe, it.groups.st, it.groups.theta, it.misfit, it.step,
              it.restarted ? " (restart)" : "", it.forward_runs, it.ensemble_calls, seconds);
  std::fflush(stdout);
}

int run(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
  Options o = parse(argc, argv);
  const karst::Forcing forcing = read_forcing(o.forcing);
  check_stability(o, forcing);
  const std::vector<double> observed = observed_curve(o, forcing);
  const karst::Evaluate evaluate = make_evaluator(o.backend, o.grid, forcing, observed, o.threads);
  std::printf("karst_fit: %zu steps, grid N %zu M %zu dr %g, Psi %g, backend %s; start Pe %g St %g Theta %g\n",
              forcing.steps(), o.grid.n, o.grid.m, o.grid.dr, o.start.psi, o.backend.c_str(), o.start.pe, o.start.st,
              o.start.theta);
  const auto t0 = std::chrono::steady_clock::now();
  o.nlcg.progress = [t0](const karst::Iteration& it) { progress(it, t0); };
  const karst::Fit fit = karst::nlcg(evaluate, o.start, o.bounds, o.nlcg);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("fitted: Pe %.8g St %.8g Theta %.8g, RMS misfit %.4e; %zu iterations, %zu ensembles, %zu forward runs, "
              "%.2f s; stopped: %s\n",
              fit.groups.pe, fit.groups.st, fit.groups.theta, fit.misfit, fit.iterations, fit.ensemble_calls,
              fit.forward_runs, seconds, fit.stopped.c_str());
  if (!o.out_params.empty()) write_params(o.out_params, fit, seconds);
  const std::string curves = !o.out_curves.empty() ? o.out_curves : (o.plot.empty() ? "" : o.plot + ".csv");
  if (!curves.empty()) {
    const std::vector<double> fitted = karst::forward_cpu(karst::Model::heat, o.grid, forcing,
                                                          std::vector<karst::Groups>{fit.groups},
                                                          karst::Outlet::advective, o.threads);
    write_curves(curves, forcing, observed, fitted);
  }
  if (!o.plot.empty()) plot(o, curves, fit);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const InputError& e) {
    std::cerr << "karst_fit: " << e.what() << "\n";
    return 2;
  } catch (const std::invalid_argument& e) {  // the model's checks: bounds, start, stability
    std::cerr << "karst_fit: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "karst_fit: " << e.what() << "\n";
    return 1;
  }
}
