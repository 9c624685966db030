// Collectives as traffic: an all-reduce, reduce-scatter, all-gather, all-to-all, broadcast or send/recv lowered
// to transfer steps of a program, between memory endpoints on the real links, so that concurrent collectives and
// other traffic contend in the executor instead of being assumed. docs/collectives.md has the algorithms with
// pictures of their steps, the symmetric fast path and its proof test.
//
// Algorithms (each a sequence of rounds; a round is a set of transfers that may run at once):
//  - ring: reduce-scatter = n-1 rounds, rank i sends one n-th of the buffer to rank i+1 (the piece it received
//    in the round before, reduced with its own); all-gather = n-1 rounds of the same shape, forwarding without
//    reducing; all-reduce = reduce-scatter then all-gather (2(n-1) rounds of bytes/n). Broadcast on a ring is a
//    chain root -> root+1 -> ... (pipelined when `chunks` > 1).
//  - torus: one ring per dimension in turn (shape = grid extents, first dimension fastest in rank order):
//    reduce-scatter along dimension 0, then along dimension 1 on the shard each rank owns, ...; all-gather back
//    in reverse order. The 2D/3D torus all-reduce of TPU pods and IPU-PODs. A one-dimensional shape is the ring.
//  - hierarchical: shape = {ranks per group, groups}, groups of consecutive ranks: reduce-scatter inside each
//    group, all-reduce (ring) between the ranks with the same local index across groups on the 1/group shard,
//    all-gather inside each group (a DGX: NVLink inside a node, InfiniBand between). Its transfers are those of
//    a 2D torus of that shape; it is kept as its own name because that is how systems describe it.
//  - tree: binomial tree over ranks relative to the root (rank 0 for all-reduce): all-reduce reduces up the
//    tree (a parent sends after it has received from every child) and broadcasts down; broadcast only goes down.
//    Every transfer carries the whole buffer (or one slice of it with `chunks`).
//  - direct: every pair at once in one round: all-to-all (rank i sends piece j to rank j), reduce-scatter
//    (piece j to rank j), all-gather (own piece to every rank), all-reduce (the reduce-scatter then the
//    all-gather, two rounds), broadcast (root to every rank), send_recv (one transfer root -> peer).
//  - in_network: the switch reduces (NVLink SHARP, SwarmX): every rank writes its buffer into its engine in the
//    switch (`engines`, a switch_reducer each), and once every rank's contribution is in, each engine sends the
//    result back to its rank (the switch multicasts it). all-reduce: the whole buffer in and out; reduce-scatter:
//    the whole buffer in, the rank's piece out. Give `chunks` so that slices stream through the switch (NCCL's
//    NVLS pipelines them); without, the whole buffer is reduced before any result leaves.
//  `bidirectional` (ring, torus, hierarchical): half the buffer goes round each ring one way, half the other
//  way, in the same rounds (both directions of a link, as on TPU ICI and IPU-Links).
//
// Dependencies: a rank's transfer in a round waits for (a) that rank's transfers of its previous round (one
// send engine per rank: it does not run ahead), (b) every transfer it received since (the data it forwards or
// reduces), (c) with `chunks` > 1, the same transfer of the previous slice (slices keep their order on each
// link, so a long chain pipelines), and (d) `after` of the sender before its first transfer and of the receiver
// before its first transfer in (its buffer must be ready). Each rank's `done` is a zero-length delay step after
// its last transfers out and every transfer into it that nothing else waits for.
//
// Modelled: every byte on the links and through the source and destination memories, with the network's
// packetisation, latency and contention. Left out: the reduction's compute. NCCL and the TPU/IPU runtimes fuse
// the reduction into the copy (the kernel that receives a piece adds it to the local piece as it goes), so link
// bandwidth, not arithmetic, bounds it; the extra local read of the piece being reduced is not charged to the
// memory either (in_network charges the switch engine's reduction rate instead). Also left out: protocol choice
// (NCCL's LL/LL128/Simple), kernel launch overhead (add a delay step to `after`), and the exact address layout of
// pieces and slices (each transfer reads and writes the right number of bytes at a plausible offset of the rank's
// buffer).
//
// Symmetric fast path (`symmetric`): the ranks are assumed interchangeable (the same links, the same timing, the
// same start), and only the representative rank's own transfers are emitted; a dependency on a transfer that
// another rank sends is replaced by the representative's own transfer in the same round and position (by
// symmetry it finishes at the same time; in_network: the representative's engine stands for every engine). The
// lowering checks that every rank sends the same bytes in every round (so tree, broadcast, send_recv and byte
// counts that do not split evenly are refused). It cannot check the platform: symmetry does not hold with
// asymmetric links (a ring laid on a mesh, whose wrap-around crosses several links), a rank starting late (only
// the representative's `after` is used), or contention from traffic that is not itself symmetric, nor where
// several ranks' transfers share a link (the fast path sees only one of them). tests/system/collectives_test.cpp
// shows equality with the full lowering where symmetry holds and the difference where it does not.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/program/program.h"

namespace tessel {

enum class collective_kind { all_reduce, reduce_scatter, all_gather, all_to_all, broadcast, send_recv };
enum class collective_algorithm { ring, tree, torus, hierarchical, direct, in_network };

const char* name(collective_kind k);
const char* name(collective_algorithm a);
/// "all_reduce", ... ; an unknown name is an input_error listing the known ones (with a suggestion).
collective_kind parse_collective_kind(const std::string& text);
collective_algorithm parse_collective_algorithm(const std::string& text);
/// The algorithms lower_collective implements for a kind.
std::vector<collective_algorithm> algorithms_for(collective_kind k);
/// Whether an algorithm has a root (tree): its ranks play different roles, so it cannot be lowered for one
/// representative rank (collective_call::symmetric).
bool has_root(collective_algorithm a);

/// NCCL-tests' bus bandwidth convention: busbw = algbw x factor, algbw = bytes / time, so that busbw is
/// comparable with a link's peak whatever the rank count: all_reduce 2(n-1)/n; reduce_scatter, all_gather and
/// all_to_all (n-1)/n; broadcast and send_recv 1.
double bus_bandwidth_factor(collective_kind k, int n);

/// One collective to lower.
struct collective_call {
    collective_kind kind = collective_kind::all_reduce;
    collective_algorithm algorithm = collective_algorithm::ring;
    /// Each rank's buffer (a memory endpoint on a chip), in rank order.
    std::vector<endpoint> ranks;
    /// torus: grid extents (product = ranks, first dimension fastest); hierarchical: {ranks per group, groups};
    /// empty for the other algorithms.
    std::vector<int> shape;
    /// in_network: per rank, the switch engine (a switch_reducer) that takes its contribution; empty otherwise.
    std::vector<endpoint> engines;
    /// The collective's size as NCCL counts it: all_reduce and broadcast the buffer each rank holds,
    /// reduce_scatter the input of each rank (it keeps bytes/n), all_gather the output of each rank (it
    /// contributes bytes/n), all_to_all what each rank sends in all (bytes/n to each rank, itself included),
    /// send_recv the message.
    std::uint64_t bytes = 0;
    /// Per rank: steps that must finish before that rank takes part (empty: none; else one list per rank).
    std::vector<std::vector<std::uint32_t>> after;
    /// The program op the steps belong to (program::intern_op).
    std::uint32_t op = 0;
    int root = 0;  // broadcast: the rank that has the data; send_recv: the sender
    int peer = 1;  // send_recv: the receiver
    /// Pipelining: the buffer is cut into this many slices, each lowered on its own and following the one
    /// before on every link (0 or 1: one transfer per algorithm step).
    std::uint32_t chunks = 0;
    /// ring, torus, hierarchical: half the buffer each way round every ring.
    bool bidirectional = false;
    /// Emit only the representative rank's transfers (see the file comment). The message is then padded to a
    /// multiple of ranks x chunks x 2 bytes so that every rank's pieces are equal.
    bool symmetric = false;
    int representative = 0;
};

struct collective_steps {
    /// Per rank: a zero-length delay step after which that rank's part is complete (its result is in place and
    /// its buffer free); ~0u for ranks not simulated (symmetric).
    std::vector<std::uint32_t> done;
    std::uint32_t first = 0, end = 0;  // the steps added: [first, end)
    std::uint64_t transfers = 0;       // transfer steps among them
};

/// The schedules of the collectives lowered so far, by what a schedule depends on (kind, algorithm, ranks,
/// shape, bytes, slices, directions, root, peer, representative), not by the ranks' buffers or dependencies:
/// a pipeline lowers the same tensor-parallel all-reduce once per layer and microbatch.
class collective_schedules {
public:
    collective_schedules();
    ~collective_schedules();
    struct plan;
    const plan& of(const collective_call& c);

private:
    struct store;
    std::unique_ptr<store> m;
};

/// Adds the collective's steps to `p`. Bad calls (no ranks, a shape that does not match, a root out of range,
/// an algorithm the kind does not have, a symmetric call that is not) are input_errors saying what to change.
/// With `cache`, a schedule already made for an identical call is reused (the steps are the same).
collective_steps lower_collective(program& p, const collective_call& c, collective_schedules* cache = nullptr);

}  // namespace tessel
