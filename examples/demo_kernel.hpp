#pragma once
#include "cush/segment.hpp"

/// x = a * x + b on one segment, in its stream.
void demo_axpb(cush::Segment<float> s, float a, float b);
