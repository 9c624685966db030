// The rdu mapper: its options and its registration (its report after a run, per section: reconfiguration, loads,
// pipeline fill, steady streaming, drain and stores: engine/report/explain/rdu.cpp).
#include <algorithm>

#include "engine/mappers/rdu/internal.h"

namespace tessel {

void rdu_mapper::options::declare(param_decl& d) {
    d.choice(mode, "mode", "sections", {"sections", "single"},
             "sections: run the graph as many sections as it needs, reconfiguring between them; single: the whole "
             "graph must fit on chip as one section (an error says by how much it does not)");
    d(pcus, "pcus", "", "the group of PCUs to use (default: the first group of reconfigurable compute units: rdu_pcu)");
    d(pmus, "pmus", "", "the group of PMUs to use (default: the first group of reconfigurable memory units: rdu_pmu)");
    d(agcus, "agcus", "",
      "the AGCUs to reach off-chip memory through (default: the first component with memories behind it: rdu_agcu)");
    d(tiles, "tiles", "16", "most tiles a tensor streams through the pipeline in (rounded down to a power of two)",
      bound::positive);
    d(min_tile_rows, "min_tile_rows", "8", "fewest rows of a tensor in one tile (fewer tiles for short tensors)",
      bound::positive);
    d(buffer_depth, "buffer_depth", "2", "tiles an input buffer holds (2: double buffering)", bound::positive);
    d(chunk_above, "chunk_above", "0.5",
      "split a matrix product into column chunks when its weights and whole operands need more than this share "
      "of all PMU capacity",
      bound::positive);
    d(weights_tier, "weights_tier", "",
      "memory (behind the AGCUs) holding weights, state and configurations (default: the fastest with room)");
    d(activations_tier, "activations_tier", "",
      "memory holding graph inputs and tensors stored between sections (default: the fastest with room; where "
      "they do not fit there at once, each holds memory only while live, in the fastest with room when it is "
      "made)");
    d(steady_state, "steady_state", "true",
      "when the graph fits in one section, its configuration and weights stay on chip between runs and are not "
      "loaded (steady-state inference); false loads them in every run");
    d(floorplan_section, "floorplan_section", "-1",
      "section whose placement --floorplan outlines (-1: the one predicted to take longest)", bound::none);
    d.choice(representation, "representation", "auto", {"auto", "fine", "coarse"},
             "fine: a transfer per pair of units, in the mesh's own packets, served in exact arrival order; coarse: "
             "transfers of at least transfer_grain, packets of at least coarse_packet and a quantum of coarse_quantum "
             "(docs/platforms/rdu.md, \"Representations\"); auto: coarse when the fine program would have more than "
             "coarse_above steps and packets");
    d(coarse_above, "coarse_above", "3e6",
      "auto representation: the fine program's steps plus packets (at least; counted on the coarse one) above which "
      "a run is coarse",
      bound::positive);
    d(transfer_grain, "transfer_grain", "16KiB",
      "coarse form: fewest bytes of one tile a transfer carries (a stage's slices of a tile go to and come from as "
      "few adjacent units as keep each at least this size)",
      bound::positive);
    d(coarse_packet, "coarse_packet", "32KiB",
      "coarse form: fewest bytes of a packet on the mesh (the fine form uses the mesh's packet_bytes)",
      bound::positive);
    d(coarse_quantum, "coarse_quantum", "64cycles",
      "coarse form: how far ahead of queued requests a packet may be served (the run's quantum, docs/performance.md)");
    d(gangs, "gangs", "0",
      "coarse form: most lanes a stage's tile is cut into: its slices move in at most this many transfers and its "
      "PCUs compute it in as many gangs of adjacent units, one step each, in lockstep (0: a step per PCU) "
      "(docs/platforms/rdu.md, \"Representations\"); a system whose fine form is over the steps budget uses 64",
      bound::non_negative);
}

rdu_mapper::rdu_mapper(options o) : m_opt(std::move(o)) {}
rdu_mapper::~rdu_mapper() = default;

TESSEL_REGISTER_MAPPER(make_mapper<rdu_mapper>(
    "rdu",
    "spatial pipeline for reconfigurable dataflow units: graph sections laid out on PCUs and PMUs, tiles "
    "streamed through, sections run one after another with reconfiguration and off-chip loads and stores"));

}  // namespace tessel
