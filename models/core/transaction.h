// What travels over tessel's TLM-2.0 sockets. Every transaction is a tlm_generic_payload carrying a `txn`
// extension with the timing state: loosely timed, the target computes when the request starts and ends from
// its busy-until reservations and writes the times back in the extension (head, tail); the TLM annotated delay
// is left as the initiator set it, since every time a model needs travels in the txn. The executor hands the
// txn itself to component::transport (the function the socket forwards to), without a generic payload.
#pragma once

#include <tlm>

#include <cstdint>

#include "models/core/dtype.h"
#include "models/core/step_payload.h"
#include "models/core/units.h"

namespace tessel {

/// The class of an operation, for models that time kernels by kind (GPU, TPU) and for reports.
enum class op_class : std::uint8_t {
    gemm,
    conv,
    elementwise,
    reduction,
    softmax,
    norm,
    attention,
    pooling,
    data_movement,
    embedding,
    collective,
    other
};
const char* op_class_name(op_class c);

/// The work of one compute step. MACs are multiply-accumulates (2 FLOPs each); vector_ops are element
/// operations on the vector/SIMD path; bytes_* are the step's traffic to the unit's memory.
struct work {
    double macs = 0;
    double vector_ops = 0;
    double bytes_in = 0;      // activations read
    double bytes_weight = 0;  // parameters read
    double bytes_out = 0;     // results written
    dtype type = dtype::fp16;
    op_class cls = op_class::other;
    // Matrix-product view (batch x M x K times K x N), when the work is one: systolic and GPU tile timing.
    std::int64_t batch = 0, m = 0, n = 0, k = 0;

    double flops() const { return 2 * macs + vector_ops; }
    double local_bytes() const { return bytes_in + bytes_weight + bytes_out; }
    bool is_matmul() const { return m > 0 && n > 0 && k > 0; }
    bool operator==(const work& o) const {
        return macs == o.macs && vector_ops == o.vector_ops && bytes_in == o.bytes_in &&
               bytes_weight == o.bytes_weight && bytes_out == o.bytes_out && type == o.type && cls == o.cls &&
               batch == o.batch && m == o.m && n == o.n && k == o.k;
    }
};

enum class txn_kind : std::uint8_t { compute, read, write, route, sync };

struct txn : tlm::tlm_extension<txn> {
    // What a network reads and writes on every link comes first, so a packet's hop touches one cache line.
    // Route transactions go one link at a time, so every link serves packets in the order they reach it:
    // in: where the packet's head is (0: at the source port's network interface); out: the next position,
    // `arrived` once it has left at the destination port, or `parked` when a network with finite buffers holds
    // it and will hand it back through sim_context::events (identified by `token`).
    static constexpr std::uint32_t arrived = ~0u, parked = ~0u - 1;
    std::uint32_t hop = 0;
    std::uint32_t src_port = 0;  // interconnect ports, for route transactions
    std::uint32_t dst_port = 0;
    std::uint32_t op = 0;     // op index, for trace names
    std::uint64_t bytes = 0;  // payload bytes of this packet or access
    tick head = 0;            // in: first byte (or request) arrives; out: first byte leaves
    tick tail = 0;            // in: last byte arrives; out: last byte leaves (compute: end)
    // A network may take the packet over further links in the same call while its head reaches them before
    // `horizon` (the executor's next queued event: nothing can reach those links earlier); 0: one link only.
    tick horizon = 0;
    tick origin = 0;         // compute: when the step's schedule counts from (the program start, or its anchor's end)
    std::uint64_t step = 0;  // step id, for traces
    std::uint64_t token = 0;
    txn_kind kind = txn_kind::compute;
    std::int32_t unit = 0;  // unit within the target; -1: the target picks it from the address
    std::uint64_t address = 0;
    std::uint32_t participants = 0;         // sync
    const work* w = nullptr;                // compute
    const step_payload* payload = nullptr;  // compute: the step's kernel descriptor or instruction, if any

    tlm::tlm_extension_base* clone() const override { return new txn(*this); }
    void copy_from(const tlm::tlm_extension_base& other) override { *this = static_cast<const txn&>(other); }
};

}  // namespace tessel
