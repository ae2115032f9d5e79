#pragma once
/// @file cush.hpp
/// @brief Everything cush offers: include this one header.

#include "cush/block.hpp"
#include "cush/device_buffer.hpp"
#include "cush/device_guard.hpp"
#include "cush/device_ops.hpp"
#include "cush/device_set.hpp"
#include "cush/distribution.hpp"
#include "cush/error.hpp"
#include "cush/field.hpp"
#include "cush/grid.hpp"
#include "cush/halo_components.hpp"
#include "cush/host_device.hpp"
#include "cush/host_memory.hpp"
#include "cush/layout.hpp"
#include "cush/plan.hpp"
#include "cush/reduce.hpp"
#include "cush/segment.hpp"
#include "cush/stream.hpp"
#include "cush/transport.hpp"
#include "cush/version.hpp"
#include "cush/virtual_gpus.hpp"
