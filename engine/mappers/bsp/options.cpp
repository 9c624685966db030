// The bsp mapper: its options and its registration (its report after a run: engine/report/explain/bsp.cpp).
#include "engine/mappers/bsp/bsp_mapper.h"

namespace tessel {

void bsp_mapper::options::declare(param_decl& d) {
    d(tiles, "tiles", "",
      "the tiles to run on (default: the first component whose units compute on their own memory: ipu_tiles)");
    d(sync, "sync", "", "the barrier that ends every superstep (default: the first barrier)");
    d(streaming_memory, "streaming_memory", "",
      "memory for weights that do not stay on the tiles (default: the first memory that does not compute; "
      "'none': no streaming memory)");
    d(code_reserve, "code_reserve", "0.25",
      "share of each tile's SRAM taken by code, vertex state, stacks and exchange buffers (not for tensors); an "
      "assumption: Poplar's always-live memory varies by model");
    d.choice(
        weights, "weights", "auto", {"auto", "resident", "streaming"},
        "auto: weights and state stay on the tiles when they fit, else the fewest that make the rest fit come from "
        "streaming memory (sparsely read tables first, then the largest; reported); "
        "resident: they must fit; streaming: always from streaming memory");
    d.choice(activations, "activations", "auto", {"auto", "tiles", "streaming"},
             "auto: activations stay on the tiles, unless the run does not fit there: then as streaming; tiles: "
             "they must fit; streaming: an activation the backward pass reads goes to streaming memory after its "
             "last forward reader, and the backward ops read it from there (Poplar's off-chip tensor locations; "
             "reported)");
    d.choice(partials, "partials", "fp32", {"fp32", "fp16"},
             "type of matrix-product partial sums (Poplar's default: fp32)");
    d(min_piece, "min_piece", "256B",
      "smallest piece of a tensor given a tile of its own: small tensors spread over fewer tiles");
    d(matmul_split, "matmul_split", "",
      "force every matrix product's split as PMxPNxPK (teaching, tests); empty: the planner chooses");
    d.choice(
        representation, "representation", "auto", {"auto", "fine", "coarse"},
        "fine: a program step per message and per tile's compute; coarse: one step per superstep carrying every "
        "tile's exchange totals and compute (models/bsp/bsp_superstep.h); auto: coarse when the fine program would "
        "have more than coarse_above messages and compute steps (estimated from the graph)");
    d(coarse_above, "coarse_above", "2e6",
      "auto representation: the estimated fine step count above which a run is coarse", bound::positive);
    d(coarse_packet, "coarse_packet", "0B",
      "coarse form: the fewest bytes of a packet on any network (0: the networks' own); when set, a superstep's "
      "transfers from and to streaming memory are merged into a few over enough tiles to outrun the stream; the "
      "system mapper uses 64KiB when it coarsens a run for the steps budget");
}

TESSEL_REGISTER_MAPPER(make_mapper<bsp_mapper>(
    "bsp",
    "Graphcore IPU: every op a bulk-synchronous superstep (exchange, compute, sync) over all tiles; matrix "
    "products split in batch x M x N x K to minimise compute + exchange within each tile's memory; weights "
    "resident or streamed"));

}  // namespace tessel
