#include "engine/system/partition.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>

#include "engine/workload/cost.h"
#include "engine/workload/load.h"
#include "engine/workload/op_types.h"
#include "engine/workload/training.h"
#include "models/core/error.h"

namespace tessel {

int chunk_of_layer(std::int64_t layer, std::int64_t layers, int chunks) {
    if (chunks <= 1 || layers <= 0) return 0;
    if (layer < 0) return 0;
    if (layer >= layers) return chunks - 1;
    const std::int64_t per = layers / chunks;
    return static_cast<int>(std::min<std::int64_t>(layer / std::max<std::int64_t>(per, 1), chunks - 1));
}

workload_graph subgraph(const workload_graph& g, const std::vector<int>& ops, const std::string& name,
                        bool keep_order) {
    std::vector<char> in_set(g.ops().size(), 0);
    for (int o : ops) in_set[static_cast<size_t>(o)] = 1;
    std::set<int> used;
    for (int o : ops) {
        for (int t : g.op(o).inputs) used.insert(t);
        for (int t : g.op(o).outputs) used.insert(t);
    }
    workload_graph s;
    s.name = name;
    s.parameters = g.parameters;
    s.batch = g.batch;
    std::map<int, int> remap;
    for (int t : used) {
        tensor_info ti = g.tensor(t);
        const bool inside = ti.producer >= 0 && in_set[static_cast<size_t>(ti.producer)];
        if (!inside) {
            if (ti.role == tensor_role::activation || ti.role == tensor_role::output) ti.role = tensor_role::input;
        } else {
            bool read_outside = ti.role == tensor_role::output;
            for (int c : ti.consumers) read_outside |= !in_set[static_cast<size_t>(c)];
            ti.role = read_outside ? tensor_role::output : tensor_role::activation;
        }
        ti.producer = -1;
        ti.consumers.clear();
        ti.alias_of = -1;
        ti.grad_of = -1;
        remap[t] = s.add_tensor(std::move(ti));
    }
    // A gradient keeps its tensor when the chunk holds that tensor too.
    for (int t : used) {
        const auto of = remap.find(g.tensor(t).grad_of);
        if (of != remap.end()) s.tensors()[static_cast<size_t>(remap.at(t))].grad_of = of->second;
    }
    std::vector<int> sorted = ops;
    if (!keep_order) std::sort(sorted.begin(), sorted.end());
    for (int o : sorted) {
        op_node op = g.op(o);
        for (int& t : op.inputs) t = remap.at(t);
        for (int& t : op.outputs) t = remap.at(t);
        s.add_op(std::move(op));
    }
    s.relink();
    return s;
}

namespace {

/// The layer of an op without a "layer" attribute (graphs not built layer by layer are one layer).
constexpr std::int64_t k_untagged = std::numeric_limits<std::int64_t>::min();

std::int64_t layer_attr(const op_node& op, std::int64_t fallback) {
    const auto it = op.int_attrs.find("layer");
    return it == op.int_attrs.end() || it->second.empty() ? fallback : it->second.front();
}

std::int64_t param_int(const workload_graph& g, const std::string& key, std::int64_t fallback = 0) {
    const auto it = g.parameters.find(key);
    if (it == g.parameters.end()) return fallback;
    try {
        return static_cast<std::int64_t>(std::stod(it->second));
    } catch (const std::exception&) {
        return fallback;
    }
}

/// Bytes of the whole tensor a collective works on (NCCL-tests convention).
double collective_bytes(const workload_graph& g, const op_node& op) {
    double in = 0, out = 0;
    for (int t : op.inputs) in += static_cast<double>(g.tensor(t).bytes());
    for (int t : op.outputs) out += static_cast<double>(g.tensor(t).bytes());
    return std::max(in, out);
}

void list_collectives(const workload_graph& g, const std::string& when_default, std::vector<collective_use>& out) {
    for (const auto& op : g.ops()) {
        if (op.kind != op_kind::collective) continue;
        const bool recompute = attr_int(op, "recompute") != 0;
        out.push_back(collective_use{op.name, op.type, attr_text(op, "group"), collective_bytes(g, op),
                                     recompute ? "recompute" : when_default});
    }
}

class partitioner {
public:
    partitioner(const workload_graph& g, const parallel_plan& plan, std::int64_t layers, std::int64_t seq,
                partition_detail detail)
        : m_g(g), m_plan(plan), m_layers(layers), m_seq(seq), m_detail(detail) {}

    std::vector<chunk_partition> run() {
        const int chunks = m_plan.chunks();
        const size_t n = m_g.ops().size();
        m_chunk.assign(n, 0);
        for (size_t i = 0; i < n; ++i) m_chunk[i] = chunk_of_layer(layer_attr(m_g.ops()[i], 0), m_layers, chunks);
        m_weight_grad_only.assign(n, -1);
        std::vector<chunk_partition> out(static_cast<size_t>(chunks));
        for (int c = 0; c < chunks; ++c) build(c, out[static_cast<size_t>(c)]);
        return out;
    }

private:
    const workload_graph& m_g;
    parallel_plan m_plan;
    std::int64_t m_layers, m_seq;
    partition_detail m_detail;
    std::vector<int> m_chunk;
    std::vector<int> m_weight_grad_only;  // memo: -1 unknown

    const op_node& op(int i) const { return m_g.op(i); }
    bool phase_is(int i, op_phase p) const { return op(i).phase == p; }

    /// True when op i only sums or re-lays out gradients on their way into optimizer updates (a weight gradient
    /// such as a tied embedding's, not something the pipeline sends): its results go into optimizer ops directly or
    /// through more such sums and layout changes.
    bool weight_grad_only(int i) {
        int& memo = m_weight_grad_only[static_cast<size_t>(i)];
        if (memo >= 0) return memo != 0;
        memo = 0;
        const op_node& o = op(i);
        if (o.phase != op_phase::backward ||
            !(o.type == "add" || o.kind == op_kind::reshape || o.kind == op_kind::transpose))
            return false;
        bool all = !o.outputs.empty();
        for (int t : o.outputs)
            for (int c : m_g.tensor(t).consumers)
                all = all && (phase_is(c, op_phase::optimizer) || weight_grad_only(c));
        memo = all ? 1 : 0;
        return all;
    }

    /// The tensor whose storage t shares (through views such as reshape and Megatron's f).
    int storage_root(int t) const {
        for (int guard = 0; guard < 64; ++guard) {
            const int p = m_g.tensor(t).producer;
            if (p < 0 || !is_view(op(p))) return t;
            const int src = view_source(m_g, op(p));
            if (src < 0) return t;
            t = src;
        }
        return t;
    }

    static bool holds_data(const tensor_info& t) {
        return t.role == tensor_role::activation || t.role == tensor_role::input || t.role == tensor_role::output;
    }

    /// Whether every op of `ops` comes after the ops among them that produce its inputs.
    bool in_dependency_order(const std::vector<int>& ops) const {
        std::map<int, size_t> position;
        for (size_t k = 0; k < ops.size(); ++k) position[ops[k]] = k;
        for (size_t k = 0; k < ops.size(); ++k)
            for (int t : op(ops[k]).inputs) {
                const auto it = position.find(m_g.tensor(t).producer);
                if (it != position.end() && it->second > k) return false;
            }
        return true;
    }

    /// The block op `i` is recomputed with. recompute_layers 0: the whole chunk is one block. Otherwise selective
    /// recomputes layer by layer (the "layer" attribute; ops without one are one block) and full in blocks of
    /// recompute_layers layers (the embeddings, layer -1, a block of their own).
    std::int64_t recompute_block(int i) const {
        if (m_plan.recompute_layers == 0) return 0;
        const std::int64_t layer = layer_attr(op(i), k_untagged);
        if (m_plan.recompute != "full" || layer == k_untagged || layer < 0) return layer;
        return layer / m_plan.recompute_layers;
    }

    /// What the forward ops `fwd` read, block by block, from outside their own block (data only): the tensors full
    /// recomputation keeps.
    std::set<int> block_inputs(const std::vector<int>& fwd) const {
        std::map<int, std::int64_t> block_of;  // tensors these ops produce, by block
        for (int i : fwd)
            for (int t : op(i).outputs) block_of[t] = recompute_block(i);
        std::set<int> inputs;
        for (int i : fwd)
            for (int t : op(i).inputs) {
                const auto it = block_of.find(t);
                if (holds_data(m_g.tensor(t)) && (it == block_of.end() || it->second != recompute_block(i)))
                    inputs.insert(t);
            }
        return inputs;
    }

    /// Bytes of the dropout masks of a set of dropout outputs (one byte per element).
    double mask_bytes(const std::set<int>& outputs, std::vector<kept_tensor>* list) const {
        double sum = 0;
        for (int t : outputs) {
            const auto& ti = m_g.tensor(t);
            const auto bytes = static_cast<double>(ti.elements());
            sum += bytes;
            if (list) list->push_back(kept_tensor{ti.name + ".mask", bytes});
        }
        if (list)
            std::stable_sort(list->begin(), list->end(),
                             [](const kept_tensor& a, const kept_tensor& b) { return a.bytes > b.bytes; });
        return sum;
    }

    /// Kept bytes of a set of tensors, views counted once.
    double kept_of(const std::set<int>& tensors, std::vector<kept_tensor>* list) const {
        std::set<int> roots;
        for (int t : tensors) roots.insert(storage_root(t));
        double sum = 0;
        for (int r : roots) {
            const auto& ti = m_g.tensor(r);
            if (!holds_data(ti) || (ti.producer >= 0 && op(ti.producer).phase != op_phase::forward)) continue;
            sum += static_cast<double>(ti.bytes());
            if (list) list->push_back(kept_tensor{ti.name, static_cast<double>(ti.bytes())});
        }
        if (list)
            std::stable_sort(list->begin(), list->end(),
                             [](const kept_tensor& a, const kept_tensor& b) { return a.bytes > b.bytes; });
        return sum;
    }

    /// What build works on for one chunk: its ops by phase, the weights they read, the recomputation choice and
    /// the optimizer update of each weight.
    struct chunk_work {
        std::vector<int> fwd, bwd, opt;
        std::set<int> weights;
        std::set<int> block_inputs_kept;          // full recomputation: what each block keeps
        std::vector<int> recomputed;              // forward ops re-run in the backward pass
        std::map<int, const op_node*> update_of;  // weight -> its optimizer update
    };

    void build(int c, chunk_partition& p) {
        set_chunk_position(c, p);
        chunk_work w;
        collect_chunk_ops(c, p, w);
        choose_recomputed(w);
        if (m_detail == partition_detail::graphs) build_chunk_graphs(c, p, w);
        list_boundaries(c, p, w);
        count_weights(p, w);
        count_activations(p, w);
        list_grad_sync(p, w);
    }

    void set_chunk_position(int c, chunk_partition& p) const {
        const int chunks = m_plan.chunks();
        p.index = c;
        p.stage = c % m_plan.pp;
        p.virtual_index = c / m_plan.pp;
        if (m_layers > 0 && chunks > 0) {
            const std::int64_t per = m_layers / chunks;
            p.first_layer = c == 0 ? -1 : static_cast<int>(c * per);
            p.last_layer = c == chunks - 1 ? static_cast<int>(m_layers) : static_cast<int>((c + 1) * per - 1);
        }
    }

    void collect_chunk_ops(int c, chunk_partition& p, chunk_work& w) const {
        std::set<int> state;
        for (size_t i = 0; i < m_g.ops().size(); ++i) {
            const op_node& o = m_g.ops()[i];
            if (o.phase == op_phase::optimizer) continue;
            if (m_chunk[i] != c) continue;
            (o.phase == op_phase::forward ? w.fwd : w.bwd).push_back(static_cast<int>(i));
            for (int t : o.inputs) {
                if (m_g.tensor(t).role == tensor_role::weight) w.weights.insert(t);
                if (m_g.tensor(t).role == tensor_role::state && o.phase == op_phase::forward) state.insert(t);
            }
        }
        for (int t : state) p.state_bytes += static_cast<double>(m_g.tensor(t).bytes());
        // The optimizer updates of every weight the chunk reads (a tied embedding is updated on both stages).
        for (size_t i = 0; i < m_g.ops().size(); ++i) {
            const op_node& o = m_g.ops()[i];
            if (o.phase == op_phase::optimizer && !o.inputs.empty() && w.weights.count(o.inputs[0]))
                w.opt.push_back(static_cast<int>(i));
        }
    }

    void choose_recomputed(chunk_work& w) const {
        // Recomputation, block by block (recompute_block; with recompute_layers 0 the chunk is one block). Full:
        // each block keeps only its inputs, what its forward reads from outside the block, and runs its forward
        // again (all but ops whose outputs are all kept: they would only make the next block's input) just before
        // its backward, as Megatron-LM does. Selective: a block's attention core is re-run before its backward.
        w.block_inputs_kept = m_plan.recompute == "full" ? block_inputs(w.fwd) : std::set<int>{};
        if (w.bwd.empty()) return;
        for (int i : w.fwd) {
            bool again = false;
            if (m_plan.recompute == "full")
                for (int t : op(i).outputs) again |= w.block_inputs_kept.count(t) == 0;
            else if (m_plan.recompute == "selective")
                again = attr_int(op(i), "attention_core") != 0;
            if (again) w.recomputed.push_back(i);
        }
    }

    /// The backward graph's ops: a block's recomputed ops come just before its first backward op, so one block's
    /// activations exist again at a time.
    std::vector<int> backward_order(const chunk_work& w) const {
        std::map<std::int64_t, std::vector<int>> recompute_of;
        for (int i : w.recomputed) recompute_of[recompute_block(i)].push_back(i);
        std::vector<int> bwd_ops;
        for (int i : w.bwd) {
            const auto it = recompute_of.find(recompute_block(i));
            if (it != recompute_of.end()) {
                bwd_ops.insert(bwd_ops.end(), it->second.begin(), it->second.end());
                recompute_of.erase(it);
            }
            bwd_ops.push_back(i);
        }
        if (!recompute_of.empty()) {
            // Blocks with no backward op here (none in the generated models) re-run first.
            std::vector<int> first;
            for (int i : w.recomputed)
                if (recompute_of.count(recompute_block(i))) first.push_back(i);
            bwd_ops.insert(bwd_ops.begin(), first.begin(), first.end());
        }
        if (!in_dependency_order(bwd_ops)) {
            // A block's backward reads what another block re-creates later: re-run every block first.
            bwd_ops = w.recomputed;
            bwd_ops.insert(bwd_ops.end(), w.bwd.begin(), w.bwd.end());
        }
        return bwd_ops;
    }

    void build_chunk_graphs(int c, chunk_partition& p, const chunk_work& w) const {
        p.forward = subgraph(m_g, w.fwd, m_g.name + ".chunk" + std::to_string(c) + ".forward");
        const std::vector<int> bwd_ops = backward_order(w);
        p.backward = subgraph(m_g, bwd_ops, m_g.name + ".chunk" + std::to_string(c) + ".backward", true);
        for (auto& o : p.backward.ops())
            if (o.phase == op_phase::forward) o.int_attrs["recompute"] = {1};
        p.optimizer = subgraph(m_g, w.opt, m_g.name + ".chunk" + std::to_string(c) + ".optimizer");
        if (m_plan.zero >= 1 && m_plan.dp > 1 && !w.opt.empty()) {
            // ZeRO: each replica updates 1/dp of every tensor (a flat share, rounded up).
            for (auto& t : p.optimizer.tensors())
                if (t.role != tensor_role::constant) t.shape = {(t.elements() + m_plan.dp - 1) / m_plan.dp};
            compute_costs(p.optimizer);
        }
        list_collectives(p.forward, "forward", p.collectives);
        list_collectives(p.backward, "backward", p.collectives);
        list_collectives(p.optimizer, "optimizer", p.collectives);
    }

    void list_boundaries(int c, chunk_partition& p, const chunk_work& w) {
        auto send = [&](std::vector<boundary_tensor>& list, int t, int to) {
            for (const auto& b : list)
                if (b.name == m_g.tensor(t).name && b.to_chunk == to) return;
            const auto& ti = m_g.tensor(t);
            list.push_back(boundary_tensor{ti.name, ti.shape, ti.type, static_cast<double>(ti.bytes()), c, to});
        };
        for (int i : w.fwd)
            for (int t : op(i).outputs)
                for (int consumer : m_g.tensor(t).consumers) {
                    const int to = m_chunk[static_cast<size_t>(consumer)];
                    if (to != c && !phase_is(consumer, op_phase::optimizer)) send(p.sends_forward, t, to);
                }
        for (int i : w.bwd)
            for (int t : op(i).outputs)
                for (int consumer : m_g.tensor(t).consumers) {
                    const int to = m_chunk[static_cast<size_t>(consumer)];
                    if (to == c || !phase_is(consumer, op_phase::backward) || weight_grad_only(consumer)) continue;
                    send(p.sends_backward, t, to);
                }
        for (const auto& b : p.sends_forward) p.send_forward_bytes += b.bytes;
        for (const auto& b : p.sends_backward) p.send_backward_bytes += b.bytes;
    }

    /// Weights, gradients, optimizer state.
    void count_weights(chunk_partition& p, chunk_work& w) const {
        for (const auto& o : m_g.ops())
            if (o.phase == op_phase::optimizer && !o.inputs.empty()) w.update_of[o.inputs[0]] = &o;
        for (int weight : w.weights) {
            const auto& ti = m_g.tensor(weight);
            p.weights.push_back(ti.name);
            p.params += static_cast<double>(ti.elements());
            p.weight_bytes += static_cast<double>(ti.bytes());
            const auto it = w.update_of.find(weight);
            if (it == w.update_of.end()) continue;
            const op_node& u = *it->second;
            if (u.inputs.size() > 1) p.grad_bytes += static_cast<double>(m_g.tensor(u.inputs[1]).bytes());
            for (size_t k = 2; k < u.inputs.size(); ++k)
                p.optimizer_bytes += static_cast<double>(m_g.tensor(u.inputs[k]).bytes());
        }
    }

    void count_activations(chunk_partition& p, const chunk_work& w) const {
        // Activations kept for the backward pass: what autograd saves for each backward op (saved_for_backward),
        // and the 1-byte masks of the dropouts (named by their outputs).
        if (w.bwd.empty()) return;
        std::set<int> read_by_backward, masks;
        for (int i : w.bwd)
            for (const saved_tensor& saved : saved_for_backward(m_g, op(i))) {
                const auto& ti = m_g.tensor(saved.tensor);
                if (!holds_data(ti)) continue;
                if (ti.producer < 0 || phase_is(ti.producer, op_phase::forward))
                    (saved.mask_only ? masks : read_by_backward).insert(saved.tensor);
            }
        const std::set<int> none = read_by_backward;
        std::set<int> kept, kept_masks;
        if (m_plan.recompute == "none") {
            kept = none;
            kept_masks = masks;
        } else if (m_plan.recompute == "selective") {
            std::set<int> recomputed_out;
            for (int i : w.recomputed)
                for (int t : op(i).outputs) recomputed_out.insert(t);
            for (int t : read_by_backward)
                if (!recomputed_out.count(t)) kept.insert(t);
            for (int t : masks)
                if (!recomputed_out.count(t)) kept_masks.insert(t);
            for (int i : w.recomputed)
                for (int t : op(i).inputs)
                    if (holds_data(m_g.tensor(t)) && !recomputed_out.count(t)) kept.insert(t);
        } else {
            kept = w.block_inputs_kept;  // full: each block's inputs (its dropouts re-draw their masks)
        }
        p.activation_bytes = kept_of(kept, &p.kept) + mask_bytes(kept_masks, &p.kept);
        if (m_plan.recompute_layers == 0) {
            // One block, the whole chunk: everything its backward reads that is not kept is re-created at once.
            p.recompute_bytes = std::max(0.0, kept_of(none, nullptr) + mask_bytes(masks, nullptr) - p.activation_bytes);
        } else if (m_plan.recompute != "none") {
            p.recompute_bytes = largest_block_recompute(none, masks, kept, kept_masks);
        }
    }

    /// Re-created in the backward pass, one block at a time: the most any block's backward reads that is not kept.
    double largest_block_recompute(const std::set<int>& none, const std::set<int>& masks, const std::set<int>& kept,
                                   const std::set<int>& kept_masks) const {
        double most = 0;
        std::set<int> kept_roots;
        for (int t : kept) kept_roots.insert(storage_root(t));
        std::map<std::int64_t, std::set<int>> by_block, masks_by_block;
        for (int t : none) {
            const int root = storage_root(t);
            const int producer = m_g.tensor(root).producer;
            if (kept_roots.count(root) || producer < 0) continue;
            by_block[recompute_block(producer)].insert(root);
        }
        for (int t : masks)
            if (!kept_masks.count(t)) masks_by_block[recompute_block(m_g.tensor(t).producer)].insert(t);
        for (const auto& [block, tensors] : by_block)
            most = std::max(most, kept_of(tensors, nullptr) + mask_bytes(masks_by_block[block], nullptr));
        return most;
    }

    /// Gradient synchronisation, once per iteration.
    void list_grad_sync(chunk_partition& p, const chunk_work& w) const {
        const bool has_grads = !w.opt.empty();
        if (has_grads && m_plan.dp > 1) {
            p.dp_grad_bytes = p.grad_bytes;
            if (m_plan.zero == 0) {
                p.grad_sync.push_back({"dp.grad_all_reduce", "all_reduce", "dp", p.grad_bytes, "iteration"});
            } else {
                p.grad_sync.push_back({"dp.grad_reduce_scatter", "reduce_scatter", "dp", p.grad_bytes, "iteration"});
                p.grad_sync.push_back({"dp.weight_all_gather", "all_gather", "dp", p.weight_bytes, "iteration"});
                if (m_plan.zero == 3) {
                    p.grad_sync.push_back(
                        {"dp.zero3_forward_all_gather", "all_gather", "dp", p.weight_bytes, "microbatch"});
                    p.grad_sync.push_back(
                        {"dp.zero3_backward_all_gather", "all_gather", "dp", p.weight_bytes, "microbatch"});
                }
            }
        }
        if (has_grads && m_plan.chunks() > 1) {
            const double tied = tied_grad_bytes(w);
            if (tied > 0)
                p.grad_sync.push_back({"embedding.grad_all_reduce", "all_reduce", "embedding", tied, "iteration"});
        }
        if (has_grads && m_plan.sequence_parallel && m_plan.tp > 1 && m_seq > 0) {
            const double replicated = sequence_parallel_grad_bytes(w);
            if (replicated > 0)
                p.grad_sync.push_back(
                    {"tp.sequence_parallel_grad_all_reduce", "all_reduce", "tp", replicated, "iteration"});
        }
    }

    /// Weights read by forward ops of other chunks on other stages (a tied embedding): their gradients are
    /// all-reduced between the stages holding a copy.
    double tied_grad_bytes(const chunk_work& w) const {
        double tied = 0;
        for (int weight : w.weights) {
            std::set<int> stages;
            for (int consumer : m_g.tensor(weight).consumers)
                if (phase_is(consumer, op_phase::forward))
                    stages.insert(m_chunk[static_cast<size_t>(consumer)] % m_plan.pp);
            if (stages.size() > 1) {
                const auto it = w.update_of.find(weight);
                if (it != w.update_of.end() && it->second->inputs.size() > 1)
                    tied += static_cast<double>(m_g.tensor(it->second->inputs[1]).bytes());
            }
        }
        return tied;
    }

    /// Replicated weights applied to this rank's share of the sequence: gradients summed over tp.
    double sequence_parallel_grad_bytes(const chunk_work& w) const {
        const std::int64_t local = m_seq / m_plan.tp;
        double replicated = 0;
        for (int weight : w.weights) {
            bool on_shard = false;
            for (int consumer : m_g.tensor(weight).consumers) {
                if (!phase_is(consumer, op_phase::forward) || op(consumer).outputs.empty()) continue;
                const auto& s = m_g.tensor(op(consumer).outputs[0]).shape;
                on_shard |= s.size() >= 3 && s[1] == local;
            }
            const auto it = w.update_of.find(weight);
            if (on_shard && it != w.update_of.end() && it->second->inputs.size() > 1)
                replicated += static_cast<double>(m_g.tensor(it->second->inputs[1]).bytes());
        }
        return replicated;
    }
};

}  // namespace

partition_result partition(const std::string& spec, const std::map<std::string, std::string>& overrides,
                           const parallel_plan& plan) {
    return partition(*make_workload_source(spec), parse_workload_overrides(overrides), plan);
}

workload_overrides rank_overrides(const plan_target& target, const workload_overrides& overrides,
                                  const parallel_plan& plan) {
    // One rank's microbatch: the batch of one microbatch and, for a splittable generator, the tp split.
    workload_overrides ov = overrides;
    ov.batch = plan.microbatch;
    if (target.splittable) {
        ov.tp = plan.tp;
        ov.sequence_parallel = plan.sequence_parallel;
    }
    return ov;
}

partition_result partition(const workload_source& source, const workload_overrides& overrides,
                           const parallel_plan& plan, partition_detail detail) {
    const plan_target target = plan_target_of(source, overrides, plan.chips());
    validate_plan(plan, target);
    return partition(source.build(rank_overrides(target, overrides, plan)), source.spec(), target, plan, detail);
}

partition_result partition(const workload_graph& g, const std::string& workload, const plan_target& target,
                           const parallel_plan& plan, partition_detail detail) {
    partition_result r;
    r.plan = plan;
    r.workload = workload;
    r.layers = target.layers;
    r.batch = target.batch;
    r.microbatches = microbatches(plan, target.batch);
    r.training = is_training_step(g);
    if (!r.training)
        r.notes.emplace_back("workload.training is none: the chunks have forward graphs only (inference pipeline)");
    r.detail = detail;
    r.chunks = partitioner(g, plan, target.layers, param_int(g, "seq", target.seq), detail).run();
    if (target.splittable && plan.tp > 1) {
        const std::int64_t vocab = param_int(g, "vocab");
        if (vocab % plan.tp)
            r.notes.push_back("the vocabulary (" + std::to_string(vocab) + ") is padded to " +
                              std::to_string((vocab + plan.tp - 1) / plan.tp * plan.tp) + " rows to split it " +
                              std::to_string(plan.tp) + " ways");
    }
    return r;
}

}  // namespace tessel
