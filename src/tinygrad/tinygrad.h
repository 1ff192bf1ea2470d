#pragma once
// the umbrella header: everything a user of tinygrad.cpp needs
#include "tg/dtype/dtype.h"
#include "tg/helpers/helpers.h"
#include "tg/nn/datasets.h"
#include "tg/nn/optim.h"
#include "tg/nn/state.h"
#include "tg/tensor/tensor.h"
#include "tg/uop/arg.h"
#include "tg/uop/ops.h"
#include "tg/uop/spec.h"
#include "tg/uop/symbolic.h"
#include "tg/uop/uop.h"
#include "tg/uop/upat.h"
