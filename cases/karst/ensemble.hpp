#pragma once
// Case "karst": an ensemble of forward runs on GPUs, in three variants with one interface, so one
// test checks them all and one benchmark times them all (README.md):
//
//     karst::Single v(setup, cases::Devices::first(1));      // or MultiCuda, MultiCush
//     karst::Runs r = v.run(forcing, members, observed);     // blocks until done
//     r.curves[k * steps + s];  r.misfits[k];
//
//  - Single: the reference, every member on one GPU, batched (kernels.hpp).
//  - MultiCuda: the members divided over the GPUs by hand (raw CUDA).
//  - MultiCush: a cush plan over the members (uniform, or any cush::Distribution, e.g. by memory
//    bandwidth for unlike GPUs): members scattered, forcing and observed curve broadcast, curves
//    and misfits gathered.
// All three run the same kernels through launch_forward, so their curves agree bit for bit.

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "cush/distribution.hpp"
#include "devices.hpp"
#include "karst.hpp"

namespace cases::karst {

/// The model a variant runs.
struct Setup {
  Model model = Model::heat;
  Grid grid{};
  Outlet outlet = Outlet::advective;
  Path path = Path::automatic;  ///< the kernels (karst.hpp); every path gives the same numbers
};

/// What an ensemble run gives back.
struct Runs {
  std::vector<double> curves;   ///< curves[k * steps + s]: member k's outlet after step s
  std::vector<double> misfits;  ///< with an observed curve, the RMS misfit of each member; else empty
};

/// Every variant's run(): checks the forcing and members (check(), eq. 4.21/4.28) and an observed
/// curve's length (steps values, or none) before anything runs, then runs every member from the
/// initial condition over the forcing and blocks until the results are on the host. Device memory
/// is kept between runs and grows when a run needs more.

class Single {
 public:
  /// gpus.cuda[0] is the GPU; std::invalid_argument for no GPU or a bad grid.
  Single(const Setup& setup, const Devices& gpus);
  ~Single();
  Single(Single&&) noexcept;
  Single& operator=(Single&&) noexcept;
  Runs run(const Forcing& forcing, std::span<const Groups> members, std::span<const double> observed = {});
  /// The last run's final fields (tests): water[k * N + j], rock[(k * M + i) * N + j] (heat).
  std::vector<double> water() const;
  std::vector<double> rock() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

class MultiCuda {
 public:
  MultiCuda(const Setup& setup, const Devices& gpus);
  ~MultiCuda();
  MultiCuda(MultiCuda&&) noexcept;
  MultiCuda& operator=(MultiCuda&&) noexcept;
  Runs run(const Forcing& forcing, std::span<const Groups> members, std::span<const double> observed = {});

 private:
  struct State;
  std::unique_ptr<State> s_;
};

class MultiCush {
 public:
  MultiCush(const Setup& setup, const Devices& gpus, cush::Distribution distribution = cush::Distribution::uniform());
  ~MultiCush();
  MultiCush(MultiCush&&) noexcept;
  MultiCush& operator=(MultiCush&&) noexcept;
  Runs run(const Forcing& forcing, std::span<const Groups> members, std::span<const double> observed = {});

 private:
  struct State;
  std::unique_ptr<State> s_;
};

/// An ensemble evaluator for the inversion (inversion.hpp's Evaluate): every call runs its members
/// as one ensemble on `variant` and returns their RMS misfits against `observed`.
template <class V>
std::function<std::vector<double>(std::span<const Groups>)> evaluate_on(std::shared_ptr<V> variant, Forcing forcing,
                                                                        std::vector<double> observed) {
  return [variant = std::move(variant), forcing = std::move(forcing), observed = std::move(observed)](
             std::span<const Groups> members) { return variant->run(forcing, members, observed).misfits; };
}

}  // namespace cases::karst
