#include "models/interconnect/interconnect.h"

#include <algorithm>
#include <stdexcept>

namespace tessel {

void packet_params::declare(param_decl& d, std::string_view packet, std::string_view header,
                            std::string_view outstanding) {
    d(packet_bytes, "packet_bytes", packet, "largest payload of one packet", bound::positive);
    d(header_bytes, "header_bytes", header, "header added to every packet on the wire");
    d(max_outstanding, "max_outstanding", outstanding,
      "packets of one transfer starting on this network in flight at once (its interface's buffers; a packet holds "
      "its slot until delivered, or until it leaves this network on a route through several)",
      bound::positive, 65536);
}

void interconnect::traverse(txn& t) {
    t.kind = txn_kind::route;
    while (t.hop != txn::arrived) {
        transport(t);
        if (t.hop == txn::parked)
            throw std::logic_error(path() + ": traverse() cannot drive a network that parks packets");
    }
}

resource_usage interconnect::link_usage(double bytes_per_second) const {
    resource_usage u;
    u.name = path();
    u.kind = kind_name();
    u.cls = resource_class::network;
    u.work_unit = "B";
    u.peak_rate = bytes_per_second;
    u.units = 0;
    return u;
}

void interconnect::cross(const txn& t, const link_energy& e, reservation& link, double& link_bytes, std::uint64_t wire,
                         tick ser, tick pipeline, tick wire_delay, tick& head, tick& tail) const {
    const tick entry = head;
    link_hop::pass(link, link_bytes, wire, ser, pipeline, wire_delay, head, tail);
    spend(t, energy_part::network, static_cast<double>(wire) * e.transfer.joules(), entry, tail);
}

void interconnect::charge_links(resource_usage& u, const link_energy& e) {
    charge(u, u.work * e.transfer.joules(), e.leakage.watts() * u.units);
}

void interconnect::add_link(resource_usage& u, double bytes, tick busy) {
    u.units += 1;
    u.work += bytes;
    u.ideal_max = std::max(u.ideal_max, bytes / u.peak_rate);
    u.ideal_seconds += bytes / u.peak_rate;
    u.busy_seconds += ticks_to_seconds(busy);
    u.busy_max = std::max(u.busy_max, ticks_to_seconds(busy));
}

}  // namespace tessel
