// Physical parameters -> the model's dimensionless groups (seed 002 eqs. 4.5-4.9, 4.23, 4.24).
#include <cmath>
#include <stdexcept>
#include <string>

#include "karst.hpp"

namespace cases::karst {

namespace {

void positive(double value, const char* name) {
  if (!(value > 0.0) || !std::isfinite(value))
    throw std::invalid_argument(std::string("cases::karst: ") + name + " must be positive and finite, got " +
                                std::to_string(value));
}

}  // namespace

Transfer transfer(const Physical& p) {
  positive(p.velocity, "velocity");
  positive(p.hydraulic_diameter, "hydraulic_diameter");
  positive(p.water_density, "water_density");
  positive(p.water_viscosity, "water_viscosity");
  positive(p.water_heat_capacity, "water_heat_capacity");
  positive(p.water_conductivity, "water_conductivity");
  positive(p.friction, "friction");
  Transfer t{};
  t.reynolds = p.water_density * p.velocity * p.hydraulic_diameter / p.water_viscosity;
  t.prandtl = p.water_heat_capacity * p.water_viscosity / p.water_conductivity;
  if (t.reynolds <= 1000.0)
    throw std::invalid_argument("cases::karst: Reynolds number " + std::to_string(t.reynolds) +
                                " is below the Gnielinski correlation's range (> 1000)");
  const double f8 = p.friction / 8.0;
  t.nusselt = f8 * (t.reynolds - 1000.0) * t.prandtl / (1.0 + 12.7 * std::sqrt(f8) * (std::cbrt(t.prandtl * t.prandtl) - 1.0));
  t.h = p.water_conductivity * t.nusselt / p.hydraulic_diameter;
  return t;
}

Groups groups(const Physical& p) {
  positive(p.length, "length");
  positive(p.dispersivity, "dispersivity");
  positive(p.rock_heat_capacity, "rock_heat_capacity");
  positive(p.rock_conductivity, "rock_conductivity");
  positive(p.rock_density, "rock_density");
  if (!(p.reaction_length > 0.0))
    throw std::invalid_argument("cases::karst: reaction_length must be positive (infinity: no reaction)");
  const Transfer t = transfer(p);
  const double water_capacity = p.water_density * p.water_heat_capacity;  // J/(m^3 K)
  const double rock_capacity = p.rock_density * p.rock_heat_capacity;
  const double rock_diffusivity = p.rock_conductivity / rock_capacity;    // alpha_r [m^2/s]
  const double radius = p.hydraulic_diameter / 2.0;
  Groups g;
  g.pe = p.length * p.velocity / p.dispersivity;
  g.st = 4.0 * t.h * p.length / (water_capacity * p.hydraulic_diameter * p.velocity);
  g.theta = radius * radius * p.velocity / (p.length * rock_diffusivity);
  g.psi = water_capacity / rock_capacity;
  g.da = p.length / p.reaction_length;  // 0 for an infinite reaction length
  return g;
}

double reaction_length(double alpha, double friction, double hydraulic_diameter, double gradient) {
  positive(alpha, "alpha");
  positive(friction, "friction");
  positive(hydraulic_diameter, "hydraulic_diameter");
  positive(gradient, "gradient");
  constexpr double g = 9.81;
  return std::sqrt(2.0 * g / friction) * std::pow(hydraulic_diameter, 1.5) * std::sqrt(gradient) / (4.0 * alpha);
}

}  // namespace cases::karst
