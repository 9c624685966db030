#include "models/core/transaction.h"

namespace tessel {

const char* op_class_name(op_class c) {
    switch (c) {
        case op_class::gemm:
            return "gemm";
        case op_class::conv:
            return "conv";
        case op_class::elementwise:
            return "elementwise";
        case op_class::reduction:
            return "reduction";
        case op_class::softmax:
            return "softmax";
        case op_class::norm:
            return "norm";
        case op_class::attention:
            return "attention";
        case op_class::pooling:
            return "pooling";
        case op_class::data_movement:
            return "data_movement";
        case op_class::embedding:
            return "embedding";
        case op_class::collective:
            return "collective";
        case op_class::other:
            return "other";
    }
    return "other";
}

}  // namespace tessel
